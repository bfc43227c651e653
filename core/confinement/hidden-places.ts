import { readdir, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { isCredentialLikePath } from './credential-rules.js';
import { homeCredentialPaths } from './home-credential-paths.js';
import { SSH_CONFIG, SSH_HOST_KEY, SYSTEM_SECRETS } from './system-secrets.js';

/**
 * What no tool may read, whatever the workspace: the credential rules (credential-rules.ts), which match
 * names at any depth, and the places below, by their absolute paths: the user's home's credential places
 * (home-credential-paths.ts) and the system's secrets (system-secrets.ts). Every tool hides the same: the
 * file tools and `load_skill` refuse or leave out what lies in them, the capture refuses it, and the
 * command sandbox covers it.
 */
export class HiddenPlaces {
  /** Absolute paths, as they are named and, where a link leads elsewhere, where they lead. */
  readonly absolute: readonly string[];

  constructor(absolute: readonly string[]) {
    this.absolute = [...new Set(absolute)];
  }

  /** The places of this machine: found once at startup (a link is followed where it exists). */
  static async resolve(userHome: string | null): Promise<HiddenPlaces> {
    const hostKeys = await readdir(SSH_CONFIG).then(
      (names) => names.filter((name) => SSH_HOST_KEY.test(name)).map((name) => join(SSH_CONFIG, name)),
      () => [],
    );
    const home = userHome === null ? null : await realpath(userHome).catch(() => userHome);
    const named = [...SYSTEM_SECRETS, ...hostKeys, ...(home === null ? [] : homeCredentialPaths(home))];
    const real = await Promise.all(named.map((path) => realpath(path).catch(() => path)));
    return new HiddenPlaces([...named, ...real]);
  }

  /** Whether `path` (absolute and real) is one of the places or lies in one. */
  holds(path: string): boolean {
    return this.absolute.some((place) => path === place || path.startsWith(`${place}${sep}`));
  }

  /** The places that lie in the folder `real` (absolute and real), relative to it, `/`-separated. */
  inside(real: string): string[] {
    const prefix = real.endsWith(sep) ? real : `${real}${sep}`;
    return this.absolute
      .filter((place) => place.startsWith(prefix))
      .map((place) => place.slice(prefix.length));
  }
}

/**
 * Whether a path beneath a folder (its components) is hidden: a credential rule matches it, or it is, or
 * lies in, one of `hidden` (the folder's places from `HiddenPlaces.inside`).
 */
export function isHiddenPath(components: readonly string[], hidden: readonly string[]): boolean {
  if (isCredentialLikePath(components)) return true;
  if (hidden.length === 0) return false;
  const path = components.join('/');
  return hidden.some((place) => path === place || path.startsWith(`${place}/`));
}
