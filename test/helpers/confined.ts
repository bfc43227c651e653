import { realpathSync, statSync } from 'node:fs';
import type { ConfinedWorkspace } from '../../core/confinement/confined-workspace.js';

/**
 * `path` pinned as `session.create` pins a workspace: by its real path and identity now (none for a path
 * that is not a folder), with `hidden` as the places inside it no tool may read.
 */
export function pinnedWorkspace(path: string, hidden: readonly string[] = []): ConfinedWorkspace {
  try {
    const real = realpathSync(path);
    const { dev, ino } = statSync(real, { bigint: true });
    return { path, real, identity: { dev: String(dev), ino: String(ino) }, hidden };
  } catch {
    return { path, real: path, identity: null, hidden };
  }
}
