import { dirname } from 'node:path';
import { ConfigError } from '../config/config-file.js';
import { removeDaemonRecord, writeDaemonRecord } from '../config/daemon-record.js';
import type { ServeSettings } from '../config/settings.js';
import { EndpointError } from '../core/endpoint/endpoint-error.js';
import { homeId } from '../core/endpoint/home-identity.js';
import { acquireLock, lockHome, OWNERSHIP_CHECK_MS } from '../core/endpoint/home-lock.js';
import { closeInheritedOnExec } from '../core/endpoint/inherited-descriptors.js';
import type { LifetimeLock } from '../core/endpoint/lifetime-lock.js';
import {
  checkSocketPath,
  isStillPublished,
  prepareSocketDirectory,
  privateBindPath,
  publishSocket,
  removeStalePrivateSockets,
  type SocketIdentity,
  unpublishSocket,
} from '../core/endpoint/socket-path.js';
import { HistoryUnavailableError } from '../core/history/history-unavailable.js';
import { buildApp } from '../plugins/app.js';
import { daemonLog } from './daemon-log.js';
import { stopped } from './stopped.js';

/**
 * `magid serve`: takes the home's lifetime lock and the socket name's lock, listens on a private
 * name and renames it into place, prints the ready line, and on SIGTERM/SIGINT or idle drains and
 * exits 0. Only the holder of both locks ever replaces or removes the socket, and the socket's lock file
 * (`<socket>.lock`) when it stops without having lost the name. Once listening it records its pid and socket
 * in `<home>/run/daemon.json`, and removes that record when it stops.
 */
export async function serve(settings: ServeSettings): Promise<number> {
  const daemon = daemonLog(settings.logLevel);
  const { log } = daemon;
  process.umask(0o077);
  closeInheritedOnExec();
  const locks: LifetimeLock[] = [];
  // The socket name's lock file is removed whenever the daemon ends without losing the name: it is made
  // beside the socket, in a folder other homes' daemons share.
  let socketLock: LifetimeLock | null = null;
  try {
    checkSocketPath(settings.socket);
    locks.push(lockHome(settings.home));
    prepareSocketDirectory(dirname(settings.socket));
    socketLock = acquireLock(`${settings.socket}.lock`, 'socket_path_in_use');
    locks.push(socketLock);
    removeStalePrivateSockets(settings.socket);
  } catch (error) {
    socketLock?.releaseAndRemove();
    for (const lock of locks) lock.release();
    if (error instanceof EndpointError) {
      process.stderr.write(`magid: ${error.message}\n`);
      return 1;
    }
    throw error;
  }

  let identity: SocketIdentity | null = null;
  let stopping = false;
  let exit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (exit = resolve));
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp({
      home: settings.home,
      provider: settings.provider,
      toolEnvironment: settings.toolEnvironment,
      logger: log,
      debugHttp: settings.debugHttp,
      idleTimeoutMs: settings.idleTimeoutMs,
      onIdle: () => stop('idle', 0, true),
    });
  } catch (error) {
    socketLock.releaseAndRemove();
    for (const lock of locks) lock.release();
    if (error instanceof ConfigError || error instanceof HistoryUnavailableError) {
      process.stderr.write(`magid: ${error.message}\n`);
      return 1;
    }
    throw error;
  }

  const stop = (reason: string, code: number, unpublish: boolean): void => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      log.info({ reason }, 'stopping');
      clearInterval(watch);
      await app.close();
      if (unpublish && identity) unpublishSocket(settings.socket, identity);
      // Last of what touches the socket's name: another daemon may take the name from here on.
      if (unpublish) socketLock.releaseAndRemove();
      try {
        removeDaemonRecord(settings.home, app.instanceId);
      } catch (error) {
        log.warn({ error: (error as Error).message }, 'the daemon record could not be removed');
      }
      stopped(app, locks, daemon, code, exit);
    })();
  };

  // A lock file or socket that is no longer ours means another daemon may own the name now: stop
  // serving, and leave the name alone.
  const watch = setInterval(() => {
    const socketIsOurs = identity === null || isStillPublished(settings.socket, identity);
    if (!locks.every((lock) => lock.isStillOurs()) || !socketIsOurs) stop('ownership lost', 2, false);
  }, OWNERSHIP_CHECK_MS);
  watch.unref();

  const privatePath = privateBindPath(settings.socket);
  await app.listen({ path: privatePath });
  identity = publishSocket(privatePath, settings.socket);
  // Before the ready line: whoever reads it may signal the daemon at once.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop(signal, 0, true));
  process.stdout.write(
    `${JSON.stringify({ ready: true, socket: settings.socket, pid: process.pid, instance_id: app.instanceId })}\n`,
  );
  // Once the socket is published, so `magid status --home` and clients find it on any socket; not awaited
  // before the ready line, which never waits on the disk.
  void writeDaemonRecord(settings.home, {
    pid: process.pid,
    socket: settings.socket,
    instance_id: app.instanceId,
    home_id: homeId(settings.home),
  }).catch((error: Error) => log.warn({ error: error.message }, 'the daemon record could not be written'));
  log.info(
    {
      instance_id: app.instanceId,
      connections_max: app.connectionCapacity.connections,
      open_files_limit: app.connectionCapacity.openFilesLimit,
    },
    'listening',
  );

  return exited;
}
