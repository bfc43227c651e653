import type { WireClient } from '../../client/wire-client.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { op } from '../helpers/daemon.js';

/** What a client keeps of an executor it created: its identity and its proof. */
export interface HeldExecutor {
  executor_id: string;
  executor_generation: number;
  resume_secret: string;
}

export const SIXTY_SECONDS = 60_000;
export const FIFTEEN_MINUTES = 900_000;
export const BASE64URL_SECRET = /^[A-Za-z0-9_-]{43}$/;

/** A provisional executor created on `client`. */
export async function createdExecutor(client: WireClient): Promise<HeldExecutor> {
  return (await client.call('executor.create', {}, { operation: op() })) as unknown as HeldExecutor;
}

/** An executor created and confirmed on `client`. */
export async function confirmedExecutor(client: WireClient): Promise<HeldExecutor> {
  const created = await createdExecutor(client);
  await client.call('executor.confirm', proof(created), { operation: op() });
  return created;
}

/** `{executor_id, resume_secret}` for confirm and resume. */
export function proof(executor: { executor_id: string }, secret?: string): Record<string, unknown> {
  return {
    executor_id: executor.executor_id,
    resume_secret: secret ?? (executor as HeldExecutor).resume_secret,
  };
}

/** `{executor_id, executor_generation}` for rotate and release. */
export function identity(executor: { executor_id: string }, generation: number): Record<string, unknown> {
  return { executor_id: executor.executor_id, executor_generation: generation };
}

/** The wire error code of a mutation, or 'ok' when it succeeds. */
export async function outcome(
  client: WireClient,
  method: string,
  payload: Record<string, unknown>,
): Promise<string> {
  const response = await client.request(method, payload, { operation: op() });
  return response.ok ? 'ok' : (response.error?.code ?? 'unknown');
}

/** A well-formed secret that was never issued. */
/** Starts a rotation at `generation` and returns its candidate secret. */
export async function candidateSecret(
  client: WireClient,
  executor: HeldExecutor,
  generation = 1,
): Promise<string> {
  const rotated = await client.call('executor.rotate', identity(executor, generation), { operation: op() });
  return rotated.resume_secret as string;
}

export function forgedSecret(): string {
  return Buffer.alloc(32, 7).toString('base64url');
}

/** Waits (in real time) until `condition` holds: socket closes reach the daemon asynchronously. */
export async function until(condition: () => boolean, what = 'condition'): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Closes `client` and waits until the daemon has detached whatever executor it held. */
export async function disconnect(daemon: TestDaemon, client: WireClient, executorId?: string): Promise<void> {
  const connections = daemon.app.framing.connections.size;
  client.close();
  await until(() => daemon.app.framing.connections.size < connections, 'the connection to close');
  if (executorId !== undefined) {
    await until(() => daemon.app.executors.attachmentOf(executorId) === null, 'the executor to detach');
  }
}
