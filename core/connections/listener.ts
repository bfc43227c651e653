import { createServer, type Server, type Socket } from 'node:net';
import type { Clock } from '../clock.js';
import { isSameUser, peerCredentials } from '../endpoint/peer-credentials.js';
import { encodeError } from '../wire/frames.js';

export type RefusalReason = 'peer_uid' | 'peer_unknown' | 'stopping' | 'connection_limit';

export interface ListenerHandlers {
  /** Serves the wire on a socket whose peer is the daemon's own user. */
  wire(socket: Socket): void;
  /** Serves plain HTTP (the optional debug inspection); absent when it is off. */
  http?: (socket: Socket) => void;
  /** A connection was refused (other user, the daemon is stopping, or it serves all it can). */
  refused?: (reason: RefusalReason) => void;
}

export interface ListenerOptions {
  /** Same-user connections served at once; each one beyond is answered `limit_exceeded` and ended. */
  maxConnections: number;
  /** Names the daemon in the refusal frame. */
  instanceId: string;
  clock: Clock;
}

export interface Listener {
  server: Server;
  readonly maxConnections: number;
  /** Connections being served now (wire or HTTP); refused ones are not counted. */
  readonly served: number;
  /** From now on every new connection is closed at once, before any byte is read or written. */
  refuseNew(): void;
}

const CONNECTION_LIMIT_MESSAGE = 'the daemon serves as many connections as it can; retry later';

/** How long a refused peer has to read the refusal and close before its socket is destroyed. */
const REFUSAL_LINGER_MS = 5_000;

/**
 * The Unix-socket listener. Each connection's peer credentials are read before any of its bytes;
 * a peer of another user is closed unread. A same-user connection beyond `maxConnections` gets one
 * `limit_exceeded` frame and an orderly end, never a bare reset (which reads as "daemon gone"). With
 * debug HTTP on, a first byte that can start an HTTP request line hands the socket to the HTTP
 * server; everything else is the wire.
 */
export function createListener(handlers: ListenerHandlers, options: ListenerOptions): Listener {
  let refusing = false;
  let served = 0;
  const limitFrame = encodeError(null, options.instanceId, 'limit_exceeded', CONNECTION_LIMIT_MESSAGE);
  // Counted here rather than with `server.maxConnections`, which destroys excess sockets unanswered.
  const server = createServer({ pauseOnConnect: true }, (socket) => {
    if (refusing) return refuse(socket, 'stopping');
    let sameUser = false;
    try {
      sameUser = isSameUser(peerCredentials(socket));
    } catch {
      return refuse(socket, 'peer_unknown');
    }
    if (!sameUser) return refuse(socket, 'peer_uid');
    if (served >= options.maxConnections) return refuseOverLimit(socket);
    served++;
    socket.once('close', () => served--);
    const http = handlers.http;
    if (!http) return handlers.wire(socket);
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      const byte = first[0] ?? 0;
      if (byte >= 0x41 && byte <= 0x5a) {
        // The HTTP server attaches its parser but does not start a socket that was handed to it.
        http(socket);
        socket.resume();
      } else handlers.wire(socket);
    });
    socket.resume();
  });

  function refuse(socket: Socket, reason: RefusalReason): void {
    socket.destroy();
    handlers.refused?.(reason);
  }

  function refuseOverLimit(socket: Socket): void {
    const linger = options.clock.setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
    socket.once('close', () => linger.cancel());
    socket.on('error', () => {});
    // What the peer sent is read and dropped: closing a Unix socket with unread bytes resets its peer.
    socket.resume();
    socket.end(limitFrame);
    handlers.refused?.('connection_limit');
  }

  return {
    server,
    maxConnections: options.maxConnections,
    get served() {
      return served;
    },
    refuseNew: () => {
      refusing = true;
    },
  };
}
