import type { WireClient } from '../../client/wire-client.js';
import { startDaemon, type TestDaemon, type TestDaemonOptions } from '../helpers/daemon.js';
import type { TestOAuthServer } from '../helpers/oauth-server.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

export const PROGRESS = 'auth.login_progress';

/** A daemon whose `provider.oauth` signs in at `server`. */
export function startOAuthDaemon(
  t: Tap,
  server: TestOAuthServer,
  oauth: Record<string, unknown> = {},
  options: TestDaemonOptions = {},
): Promise<TestDaemon> {
  return startDaemon(t, {
    ...options,
    config: { provider: { oauth: { issuer: server.issuer, client_id: 'magid-test', ...oauth } } },
  });
}

export interface Progress {
  operation_id: string | null;
  payload: Record<string, unknown> & { state: string; login_id: string };
}

/** The login's progress events up to the one in `state` (included). */
export async function untilState(client: WireClient, state: string): Promise<Progress[]> {
  const seen: Progress[] = [];
  for (;;) {
    const frame = (await client.event(PROGRESS)) as unknown as Progress;
    seen.push(frame);
    if (frame.payload.state === state) return seen;
  }
}

/** The authorization URL of the login just started on `client`. */
export async function authorizationUrl(client: WireClient): Promise<string> {
  const [shown] = await untilState(client, 'authorization_url');
  return shown!.payload.authorization_url as string;
}
