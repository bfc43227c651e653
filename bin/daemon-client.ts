import { randomUUID } from 'node:crypto';
import { LaunchError, MagiClient, NoDaemonError, WireCallError, type WireClient } from '../client/index.js';
import { DAEMON } from '../config/daemon.js';
import { serveSettings } from '../config/settings.js';
import { ExecFailure } from './exec/exec-errors.js';

/** A daemon `magid exec` starts stops after this long without a connection or work. */
export const LAUNCHED_IDLE_MS = 600_000;

/** How long a command waits for any one answer (a catalog refresh may wait on the provider for 120 s). */
const ANSWER_MS = 130_000;

export interface DaemonFlags {
  home?: string;
  socket?: string;
}

export interface LaunchFlags {
  providerBaseUrl?: string;
  model?: string;
}

/**
 * Connects to the daemon of `flags.home` (the one `magid status` finds) as the client library does. With
 * `launch`, a home where none listens gets one, started with the provider flags and an idle stop, and
 * `say` tells; the provider flags of a daemon already running cannot change, and `say` tells that too.
 */
export async function connectDaemon(
  flags: DaemonFlags,
  say: (line: string) => void,
  launch: LaunchFlags | null = null,
): Promise<MagiClient> {
  const { home } = serveSettings({ home: flags.home });
  const serveArgs = [
    ...(launch?.providerBaseUrl ? ['--provider-base-url', launch.providerBaseUrl] : []),
    ...(launch?.model ? ['--model', launch.model] : []),
    ...['--idle-timeout-ms', String(LAUNCHED_IDLE_MS)],
  ];
  let client: MagiClient;
  try {
    client = await MagiClient.connect({
      ...(flags.home === undefined ? {} : { home: flags.home }),
      ...(flags.socket === undefined ? {} : { socket: flags.socket }),
      launch: launch !== null,
      serveArgs,
      client: { name: 'magid-cli', version: DAEMON.version },
    });
  } catch (error) {
    if (error instanceof NoDaemonError) {
      throw new ExecFailure(
        `no daemon is listening for ${home}: start one with \`magid serve\`, or run \`magid exec\`, which starts one`,
      );
    }
    if (error instanceof LaunchError) {
      throw new ExecFailure(`could not start a daemon (${error.message}); its log is ${home}/magid.log`);
    }
    throw error;
  }
  if (client.launched) {
    say(
      `magid: no daemon was listening for ${home}; started one (pid ${client.launched.pid}), which stops after ${LAUNCHED_IDLE_MS / 60_000} minutes without work`,
    );
  } else if (launch?.providerBaseUrl) {
    say(
      'magid: warning: --provider-base-url applies only to a daemon this command starts; the running daemon keeps its own provider',
    );
  }
  return client;
}

/** The result of one request on `wire`; a refusal throws WireCallError with the daemon's code and message. */
export async function call<T>(
  wire: WireClient,
  method: string,
  payload: object,
  envelope: Parameters<WireClient['send']>[2] = {},
): Promise<T> {
  const frame = await wire.response(
    wire.send(method, payload as Record<string, unknown>, envelope),
    ANSWER_MS,
  );
  if (!frame.ok) throw WireCallError.of(method, frame);
  return frame.result as T;
}

/** A fresh operation id for a mutation. */
export function operationId(): string {
  return `op_${randomUUID()}`;
}
