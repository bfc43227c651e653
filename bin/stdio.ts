import type { Readable, Writable } from 'node:stream';
import { ConfigError } from '../config/config-file.js';
import type { StdioSettings } from '../config/settings.js';
import { EndpointError } from '../core/endpoint/endpoint-error.js';
import { lockHome, OWNERSHIP_CHECK_MS } from '../core/endpoint/home-lock.js';
import { closeInheritedOnExec } from '../core/endpoint/inherited-descriptors.js';
import type { LifetimeLock } from '../core/endpoint/lifetime-lock.js';
import { HistoryUnavailableError } from '../core/history/history-unavailable.js';
import { buildApp } from '../plugins/app.js';
import { daemonLog } from './daemon-log.js';
import { stopped } from './stopped.js';

export interface StdioStreams {
  input: Readable;
  output: Writable;
}

const PROCESS_STREAMS: StdioStreams = { input: process.stdin, output: process.stdout };

/**
 * `magid stdio`: the daemon of one client, its parent process, which owns the pipes. Stdin and stdout
 * are one implicit connection served by the same framing as the socket, without the profile; stdout
 * carries frames only and logs go to stderr. The home's lock is taken as `serve` takes it. The end of
 * stdin, or an output that fails, ends the client: requests already read are answered, running turns
 * are cancelled and their terminals recorded, the daemon closes, and the process exits 0 once every
 * frame written was flushed (or the output failed). SIGTERM and SIGINT stop it as they stop `serve`.
 */
export async function stdio(
  settings: StdioSettings,
  streams: StdioStreams = PROCESS_STREAMS,
): Promise<number> {
  const daemon = daemonLog(settings.logLevel);
  const { log } = daemon;
  process.umask(0o077);
  closeInheritedOnExec();
  let lock: LifetimeLock;
  try {
    lock = lockHome(settings.home);
  } catch (error) {
    if (error instanceof EndpointError) {
      process.stderr.write(`magid: ${error.message}\n`);
      return 1;
    }
    throw error;
  }

  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp({
      home: settings.home,
      provider: settings.provider,
      toolEnvironment: settings.toolEnvironment,
      logger: log,
    });
    await app.ready();
  } catch (error) {
    lock.release();
    if (error instanceof ConfigError || error instanceof HistoryUnavailableError) {
      process.stderr.write(`magid: ${error.message}\n`);
      return 1;
    }
    throw error;
  }

  const outputClosed = new Promise<void>((resolve) => streams.output.once('close', () => resolve()));
  let stopping = false;
  let exit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (exit = resolve));
  const onSignal = (signal: NodeJS.Signals) => stop(signal, 0, false);

  const stop = (reason: string, code: number, clientGone: boolean): void => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      log.info({ reason }, 'stopping');
      clearInterval(watch);
      for (const signal of ['SIGTERM', 'SIGINT'] as const) process.off(signal, onSignal);
      if (clientGone) {
        // Nobody is left to wait for: a catalog refresh waiting on the provider gives up now, before its
        // answer is waited for, and writes no cache after the client left.
        app.framing.drain();
        // A turn started by a request read before the end is running by the time its answer is written.
        await app.framing.settled();
        await app.turns.cancelAll();
      }
      await app.close();
      await outputClosed;
      stopped(app, [lock], daemon, code, exit);
    })();
  };

  const watch = setInterval(() => {
    if (!lock.isStillOurs()) stop('ownership lost', 2, false);
  }, OWNERSHIP_CHECK_MS);
  watch.unref();

  const connection = app.framing.serve({ ...streams, offersProfile: false });
  connection.onClose(() => stop('output closed', 0, true));
  streams.input.once('end', () => stop('end of input', 0, true));
  streams.input.once('error', () => stop('input failed', 0, true));
  log.info({ instance_id: app.instanceId }, 'serving stdio');
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, onSignal);
  return exited;
}
