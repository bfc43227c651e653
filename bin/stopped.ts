import { nativeAddon } from '../core/endpoint/native.js';
import type { DaemonLog } from './daemon-log.js';

/**
 * The last step of a stop, once the app is closed: releases the locks, says so and hands `code` to `exit`.
 * When a capture or workspace tool thread is still blocked on the filesystem, `process.exit()` would wait
 * for it forever, so the process ends at once instead; the kernel cannot reap it before that read returns,
 * so its locks are left to the kernel, which lets them go with the process: until then the home stays
 * locked and no other daemon starts on it.
 */
export function stopped(
  app: { capture: { abandoned: boolean }; agent: { abandoned: boolean } },
  locks: ReadonlyArray<{ release(): void }>,
  { log, flushSync }: DaemonLog,
  code: number,
  exit: (code: number) => void,
): void {
  if (app.capture.abandoned || app.agent.abandoned) {
    log.warn(
      'exiting with a thread still waiting on the filesystem: the process ends, and the home lock is let go, only once the filesystem answers it',
    );
    flushSync();
    nativeAddon().exitNow(code);
  }
  for (const lock of locks) lock.release();
  log.info('stopped');
  exit(code);
}
