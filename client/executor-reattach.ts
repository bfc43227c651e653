import { meansNoDaemon } from './no-daemon-error.js';
import type { WireClient } from './wire-client.js';
import type { ExecutorAttach, PendingCall } from './wire-types.js';

/** What reattaching an executor after a drop needs of it. */
export interface ReattachSteps {
  closed(): boolean;
  /** A new connection, initialized with the profile. */
  reconnect(): Promise<WireClient>;
  /** Starts taking the executor's events from `client`. */
  listen(client: WireClient): void;
  /** `executor.resume` with the executor's proofs; null when none resumes it any more. */
  resume(client: WireClient): Promise<ExecutorAttach | null>;
  /** No proof resumes the executor: it is lost. */
  lost(): Promise<void>;
  /** Resumed on `client`, at the generation `resumed` gives. */
  attached(client: WireClient, resumed: ExecutorAttach): void;
  /** The daemon no longer listens (said once per reattach). */
  daemonStopped(): void;
  delay(): Promise<void>;
}

/**
 * Connects again until the executor is resumed on a live connection, and returns its open calls; null
 * once the executor is closed or lost. A connection that closes during the resume is given up for the
 * next one; a failed attempt waits `delay` before the next.
 */
export async function reattach(steps: ReattachSteps): Promise<readonly PendingCall[] | null> {
  let stopped = false;
  while (!steps.closed()) {
    let client: WireClient | null = null;
    try {
      client = await steps.reconnect();
      if (steps.closed()) break;
      steps.listen(client);
      const resumed = await steps.resume(client);
      if (resumed === null) {
        client.close();
        await steps.lost();
        return null;
      }
      steps.attached(client, resumed);
      if (client.closed) continue;
      return resumed.pending_calls;
    } catch (error) {
      client?.close();
      if (meansNoDaemon(error) && !stopped) {
        stopped = true;
        steps.daemonStopped();
      }
      await steps.delay();
    }
  }
  return null;
}
