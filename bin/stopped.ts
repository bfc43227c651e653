import type { Logger } from 'pino';
import { nativeAddon } from '../core/endpoint/native.js';

/**
 * The last step of a stop, once the app is closed and the locks are released: says so and hands `code` to
 * `exit`, or ends the process at once when a capture thread is still blocked on the filesystem, which would
 * keep `process.exit()` waiting forever.
 */
export function stopped(
  app: { capture: { abandoned: boolean } },
  log: Logger,
  code: number,
  exit: (code: number) => void,
): void {
  log.info('stopped');
  if (app.capture.abandoned) {
    log.flush();
    nativeAddon().exitNow(code);
  }
  exit(code);
}
