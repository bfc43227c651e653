import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** Hexadecimal digits of a home's id: enough that two homes of one user never meet. */
const HOME_ID_DIGITS = 16;

/**
 * The real path of `home`: its symbolic links resolved as far as it exists, the missing rest appended, so
 * that a home not yet created names the same folder it will be once made.
 */
export function realHomePath(home: string): string {
  const absolute = resolve(home);
  const missing: string[] = [];
  let existing = absolute;
  for (;;) {
    try {
      return join(realpathSync(existing), ...missing.reverse());
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return absolute;
      missing.push(basename(existing));
      existing = parent;
    }
  }
}

/**
 * What a daemon says of the home it serves (`initialize` and `status` carry it): a hash of the home's real
 * path, so a client can tell its own home's daemon from another without the path going on the wire.
 */
export function homeId(home: string): string {
  return createHash('sha256').update(realHomePath(home)).digest('hex').slice(0, HOME_ID_DIGITS);
}
