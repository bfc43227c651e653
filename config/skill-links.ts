import { realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isCredentialLikePath } from '../core/confinement/credential-rules.js';
import type { LinkRefusal } from '../core/skills/skill-discovery.js';

/**
 * The rule for a symbolic link met beneath `<home>/skills` (a skill folder linked from a clone elsewhere,
 * or a whole collection): it is followed when it leads to a folder of the daemon's own user, on no
 * credential-like path, neither the daemon's home nor a folder holding it (which would expose its
 * configuration) nor inside its state, and not back up to a folder it lies in.
 */
export class SkillLinks {
  readonly #home: string;
  readonly #state: string;
  readonly #uid: number | null;

  /** `uid` is the daemon's user (tests name another). */
  constructor(home: string, uid: number | null = process.getuid?.() ?? null) {
    this.#home = this.realPathOf(home) ?? home;
    this.#state = join(this.#home, 'state');
    this.#uid = uid;
  }

  realPathOf(path: string): string | null {
    try {
      return realpathSync(path);
    } catch {
      return null;
    }
  }

  /** The real path the link at `path` leads to, or why it is not followed; `chain` holds the folders above it. */
  follow(path: string, chain: readonly string[]): { real: string } | { refused: LinkRefusal } {
    const real = this.realPathOf(path);
    if (real === null) return { refused: 'link_broken' };
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(real);
    } catch {
      return { refused: 'link_broken' };
    }
    if (!stats.isDirectory()) return { refused: 'link_not_directory' };
    if (this.#uid !== null && stats.uid !== this.#uid) return { refused: 'link_other_owner' };
    if (isCredentialLikePath(real.split('/').filter(Boolean))) return { refused: 'link_credential_path' };
    if (contains(real, this.#home) || contains(this.#state, real)) return { refused: 'link_daemon_home' };
    if (chain.some((folder) => contains(real, folder))) return { refused: 'link_loop' };
    return { real };
  }
}

/** Whether `inner` is `outer` or lies beneath it (both absolute real paths). */
function contains(outer: string, inner: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith('/') ? outer : `${outer}/`);
}
