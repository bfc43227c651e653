import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { connectSocket, WireClient } from '../../client/wire-client.js';
import { type AppOptions, buildApp } from '../../plugins/app.js';
import { type FakeClock, fakeClock } from './fake-clock.js';
import { WireSchemaCheck } from './wire-schema.js';

/** `stdio` is the framing of `magid stdio`: separate input and output streams, without the profile. */
export type Transport = 'in-process' | 'socket' | 'stdio';

/** Every wire test runs once per transport: the same frames in process and over a real socket. */
export const TRANSPORTS: readonly Transport[] = ['in-process', 'socket'];

export interface TestDaemon {
  app: FastifyInstance;
  clock: FakeClock;
  home: string;
  /** A workspace directory sessions can be created over. */
  workspace: string;
  /** A new raw connection (not initialized). */
  open(transport: Transport): Promise<WireClient>;
  /** A new connection, initialized with the profile unless told otherwise (never on stdio). */
  connect(transport: Transport, capabilities?: string[]): Promise<WireClient>;
  socketPath(): Promise<string>;
}

interface Tap {
  teardown(fn: () => unknown): void;
}

export interface TestDaemonOptions extends Partial<AppOptions> {
  /** Registers test-only routes or hooks before the daemon is ready. */
  setup?: (app: FastifyInstance) => Promise<void>;
  /** Written as the home's `config.json` before the daemon starts. */
  config?: Record<string, unknown>;
}

/** A daemon in process with a fake clock, torn down with the test. */
export async function startDaemon(t: Tap, options: TestDaemonOptions = {}): Promise<TestDaemon> {
  const root = mkdtempSync(join(tmpdir(), 'magid-test-'));
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const clock = fakeClock();
  const { setup, config, ...appOptions } = options;
  if (config) {
    mkdirSync(home);
    writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  }
  const app = await buildApp({ home, clock, ...appOptions });
  await setup?.(app);
  await app.ready();
  const clients: WireClient[] = [];
  let listening: Promise<string> | null = null;
  // Every frame of every connection is checked against docs/protocol.schema.json.
  const watch = new WireSchemaCheck();

  t.teardown(async () => {
    for (const client of clients) client.close();
    await app.close();
    rmSync(root, { recursive: true, force: true });
    if (watch.violations.length > 0) {
      throw new Error(`frames outside docs/protocol.schema.json:\n${watch.violations.join('\n')}`);
    }
  });

  const socketPath = () => {
    listening ??= (async () => {
      const path = join(root, 'd.sock');
      await app.listen({ path });
      return path;
    })();
    return listening;
  };

  const open = async (transport: Transport): Promise<WireClient> => {
    let client: WireClient;
    if (transport === 'socket') {
      client = (await connectSocket(await socketPath(), { watch })).client;
    } else if (transport === 'stdio') {
      const input = new PassThrough();
      const output = new PassThrough();
      const stdioClient = new WireClient(
        { write: (line) => input.write(line), end: () => input.end() },
        { watch },
      );
      output.on('data', (bytes: Buffer) => stdioClient.receive(bytes));
      output.on('close', () => stdioClient.closedByPeer());
      app.framing.serve({ input, output, offersProfile: false });
      client = stdioClient;
    } else {
      let channel: ReturnType<FastifyInstance['framing']['open']> | undefined;
      client = new WireClient(
        { write: (line) => channel?.receive(line), end: () => channel?.close() },
        { watch },
      );
      const inProcess = client;
      channel = app.framing.open({
        write: (frame: string) => inProcess.receive(frame),
        writableLength: 0,
        destroyed: false,
        destroy: () => inProcess.closedByPeer(),
      });
      channel.connection.onClose(() => inProcess.closedByPeer());
    }
    clients.push(client);
    return client;
  };

  return {
    app,
    clock,
    home,
    workspace,
    open,
    connect: async (transport, capabilities = transport === 'stdio' ? [] : ['application_resources_v1']) => {
      const client = await open(transport);
      await client.initialize(capabilities);
      return client;
    },
    socketPath,
  };
}

let counter = 0;
/** A fresh operation id. */
export function op(): string {
  counter++;
  return `op-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * Creates a session and claims it on `client`. The session has a title unless told otherwise, so that its
 * first completed turn asks the provider for none.
 */
export async function claimedSession(
  client: WireClient,
  workspace: string,
  title: string | null = 'Test session',
): Promise<{ session: string; control: string; generation: number }> {
  const created = await client.call('session.create', { workspace, title }, { operation: op() });
  const session = created.session_id as string;
  const claim = await client.call('session.claim', {}, { session, operation: op() });
  return { session, control: claim.control_token as string, generation: claim.grant_generation as number };
}
