import pino, { type Logger } from 'pino';

export interface DaemonLog {
  log: Logger;
  /** Writes every line still buffered before the process ends without `process.exit()`. */
  flushSync(): void;
}

/**
 * The daemon's log: pino's JSON lines on stderr, written asynchronously so that a slow reader of stderr
 * never stalls the event loop, and flushed synchronously on the one exit that skips Node's own.
 */
export function daemonLog(level: string): DaemonLog {
  const destination = pino.destination(2);
  return {
    log: pino({ level, base: { pid: process.pid } }, destination),
    flushSync: () => destination.flushSync(),
  };
}
