/** No daemon listens on the socket (nothing is bound there, or a stale socket is left). */
export class NoDaemonError extends Error {
  override readonly name = 'NoDaemonError';
  readonly socket: string;
  constructor(socket: string) {
    super(`no daemon is listening at ${socket}: start \`magid serve\` or pass \`launch: true\``);
    this.socket = socket;
  }
}

/** The socket errors that mean no daemon is listening (as opposed to one that refuses or is slow). */
const NOT_LISTENING = new Set(['ENOENT', 'ECONNREFUSED']);

/** Whether a failed connect means no daemon listens on the socket. */
export function isNotListening(error: unknown): boolean {
  return NOT_LISTENING.has((error as NodeJS.ErrnoException).code ?? '');
}

/** Whether a failure to connect (again) means the daemon is not there: it stopped, or never ran. */
export function meansNoDaemon(error: unknown): boolean {
  return error instanceof NoDaemonError || isNotListening(error);
}
