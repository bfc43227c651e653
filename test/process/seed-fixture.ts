import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { claimedSession } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import type { Controller } from '../routes/session.resources.fixture.js';
import { type MagidProcess, type ReadyLine, shortTempDir, startDaemon } from './spawn-daemon.js';

/** Bound of every wait on the daemon or the provider; generous, since the machine may be busy. */
export const WAIT_MS = 20_000;

/** A `magid serve` child with a scripted provider on loopback and a workspace of its own. */
export interface SeedDaemon {
  magid: MagidProcess;
  ready: ReadyLine;
  provider: ScriptedProvider;
  socket: string;
  workspace: string;
  /** Every connection opened through `controller`, for privacy checks over all they received. */
  clients: WireClient[];
  /** A new profile connection controlling a new session over the workspace. */
  controller(): Promise<Controller>;
  /** A new profile connection, initialized, controlling nothing. */
  connect(): Promise<{ client: WireClient; connectionId: string }>;
  /** Writes `content` at the workspace-relative `path`, creating its directories. */
  write(path: string, content: string | Buffer): void;
}

/** Starts the daemon from its sources as a separate process, configured with a scripted provider. */
export async function seedDaemon(t: Test): Promise<SeedDaemon> {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const provider = await ScriptedProvider.start(t);
  const { magid, ready } = await startDaemon(t, {
    socket,
    home: join(root, 'home'),
    args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
  });
  const clients: WireClient[] = [];
  const connect = async () => {
    const { client } = await connectSocket(socket);
    t.teardown(() => client.close());
    clients.push(client);
    const init = await client.initialize(['application_resources_v1']);
    return { client, connectionId: init.connection_id as string };
  };
  return {
    magid,
    ready,
    provider,
    socket,
    workspace,
    clients,
    connect,
    controller: async () => {
      const { client, connectionId } = await connect();
      const claimed = await claimedSession(client, workspace);
      return { client, ...claimed, connectionId, instanceId: ready.instance_id };
    },
    write: (path, content) => {
      const file = join(workspace, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    },
  };
}

/** `promise`, or a rejection naming `what` once WAIT_MS passed. */
export function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A tool contract whose compact JSON is exactly what the daemon normalizes it to. */
export function contract(
  input: Record<string, unknown>,
  output: Record<string, unknown>,
  timeoutMs = 120_000,
): string {
  const schema = (properties: Record<string, unknown>) => ({
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  });
  return JSON.stringify({
    input_schema: schema(input),
    output_schema: schema(output),
    timeout_ms: timeoutMs,
  });
}

/** The three members a result or a turn authorization repeats of a tool's revision. */
export function revisionTuple(entry: { resource_id: string; revision_id: string; revision_sha256: string }) {
  return {
    resource_id: entry.resource_id,
    revision_id: entry.revision_id,
    revision_sha256: entry.revision_sha256,
  };
}
