import { realpath, stat } from 'node:fs/promises';
import type { ConfinedWorkspace } from '../confinement/confined-workspace.js';
import type { HiddenPlaces } from '../confinement/hidden-places.js';
import type { HistoryStore } from '../history/history-store.js';
import type { CheckedWorkspace } from './workspace.js';

/**
 * Each session's workspace as its tools reach it (ConfinedWorkspace). The real path is pinned durably
 * when the session is made; the folder's identity (device and inode) is pinned for this daemon's life,
 * since some filesystems (overlayfs, btrfs) number their devices anew at each mount. A session made by an
 * earlier daemon is pinned at its first turn here: its folder must still be at its real path (a store made
 * before workspaces were pinned records that path then); until then, and while it cannot be pinned (gone,
 * or no longer at its real path), it is checked by its real path alone.
 */
export class WorkspacePins {
  readonly #history: HistoryStore;
  readonly #hidden: HiddenPlaces;
  readonly #pinned = new Map<string, ConfinedWorkspace>();

  constructor(history: HistoryStore, hidden: HiddenPlaces) {
    this.#history = history;
    this.#hidden = hidden;
  }

  /** Pins the workspace of a session just made. */
  pin(sessionId: string, checked: CheckedWorkspace): void {
    this.#pinned.set(sessionId, this.#confined(checked.workspace, checked.real, checked.identity));
  }

  /** The session's workspace, pinned; null for a session that does not exist. */
  async of(sessionId: string): Promise<ConfinedWorkspace | null> {
    const known = this.#pinned.get(sessionId);
    if (known) return known;
    const workspace = this.#history.workspaceOf(sessionId);
    if (workspace === null) return null;
    const recorded = this.#history.workspaceRealOf(sessionId);
    const real = recorded ?? (await realpath(workspace).catch(() => null));
    if (real === null) return this.#confined(workspace, workspace, null);
    const identity = await identityAt(real);
    // Another call may have pinned it meanwhile: the first pin stands.
    const pinned = this.#pinned.get(sessionId);
    if (pinned) return pinned;
    if (identity === null) return this.#confined(workspace, real, null);
    if (recorded === null) this.#history.pinWorkspaceReal(sessionId, real);
    const confined = this.#confined(workspace, real, identity);
    this.#pinned.set(sessionId, confined);
    return confined;
  }

  /**
   * The session's workspace as pinned so far, without waiting for the filesystem: a session of an earlier
   * daemon not used here yet is checked by its recorded real path alone (and pinned in the background);
   * null for a session that does not exist.
   */
  known(sessionId: string): ConfinedWorkspace | null {
    const pinned = this.#pinned.get(sessionId);
    if (pinned) return pinned;
    const workspace = this.#history.workspaceOf(sessionId);
    if (workspace === null) return null;
    void this.of(sessionId);
    return this.#confined(workspace, this.#history.workspaceRealOf(sessionId) ?? workspace, null);
  }

  /** The real path of a session's workspace as pinned, or as recorded; null when none is known. */
  realOf(sessionId: string): string | null {
    return this.#pinned.get(sessionId)?.real ?? this.#history.workspaceRealOf(sessionId);
  }

  #confined(path: string, real: string, identity: ConfinedWorkspace['identity']): ConfinedWorkspace {
    return { path, real, identity, hidden: this.#hidden.inside(real) };
  }
}

/** The identity of the folder at `real`, if it is one and `real` has no link on the way. */
async function identityAt(real: string): Promise<ConfinedWorkspace['identity']> {
  try {
    if ((await realpath(real)) !== real) return null;
    const stats = await stat(real, { bigint: true });
    return stats.isDirectory() ? { dev: String(stats.dev), ino: String(stats.ino) } : null;
  } catch {
    return null;
  }
}
