import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { WireClient } from '../../client/wire-client.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read frames' members freely
export type Frame = any;

/** One connection the test can cut at any frame. */
export interface Line {
  readonly socket: Socket;
  /** Set: frames from the daemon are no longer delivered (an answer lost in transit). */
  deaf: boolean;
  /** Destroys the socket, as a crash or a network failure would. */
  cut(): void;
  /** Hands the client a frame as if the daemon had sent it. */
  deliver(frame: Frame): void;
}

/**
 * Opens real socket connections to a daemon whose every frame, both ways, passes a hook first: a
 * test loses a request or an answer and cuts the connection at exactly the step it means.
 */
export class Severable {
  readonly #path: string;
  readonly lines: Line[] = [];
  /** Called before a request is written; false keeps it from ever reaching the daemon. */
  beforeSend: (request: Frame, line: Line) => boolean = () => true;
  /** Called before a frame from the daemon is delivered; false drops it. */
  beforeReceive: (frame: Frame, line: Line) => boolean = () => true;
  /** While set, new connections wait for it: the daemon sees the client stay away. */
  gate: Promise<void> | null = null;
  /** How many of the next connections fail as if no daemon listened; `refused` counts those that did. */
  refusals = 0;
  refused = 0;

  constructor(path: string) {
    this.#path = path;
  }

  get current(): Line {
    return this.lines.at(-1)!;
  }

  open = async (): Promise<WireClient> => {
    if (this.gate) await this.gate;
    if (this.refusals > 0) {
      this.refusals--;
      this.refused++;
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    }
    const socket = connect(this.#path);
    await once(socket, 'connect');
    const line: Line = {
      socket,
      deaf: false,
      cut: () => socket.destroy(),
      deliver: (frame) => client.receive(`${JSON.stringify(frame)}\n`),
    };
    this.lines.push(line);
    const client: WireClient = new WireClient({
      write: (text) => {
        if (this.beforeSend(JSON.parse(text), line)) socket.write(text);
      },
      end: () => socket.end(),
    });
    let pending = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      pending += text;
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
        const frame = pending.slice(0, end + 1);
        pending = pending.slice(end + 1);
        if (!line.deaf && this.beforeReceive(JSON.parse(frame), line)) client.receive(frame);
      }
    });
    socket.on('close', () => client.closedByPeer());
    socket.on('error', () => {});
    return client;
  };
}
