import { fittingPrefix } from '../tool-results/fitted-list.js';
import { INSTRUCTIONS_LIMITS } from './instructions-limits.js';
import type { InstructionsState } from './instructions-state.js';

export interface WorkspaceInstructionsState extends InstructionsState {
  workspace: string;
}

/**
 * The last read of each workspace's `AGENTS.md` (read at every turn start), for `status`: at most
 * `reported_workspaces` workspaces, the least recently read forgotten first.
 */
export class WorkspaceInstructionsReport {
  /** In order of their last read, the most recent last. */
  readonly #last = new Map<string, InstructionsState>();

  /** Records a read; true when it differs from the last one remembered for that workspace. */
  record(workspace: string, state: InstructionsState): boolean {
    const before = this.#last.get(workspace);
    this.#last.delete(workspace);
    this.#last.set(workspace, state);
    if (this.#last.size > INSTRUCTIONS_LIMITS.reported_workspaces) {
      this.#last.delete(this.#last.keys().next().value!);
    }
    return (
      before === undefined ||
      before.state !== state.state ||
      before.reason !== state.reason ||
      before.linked !== state.linked
    );
  }

  /** The most recent first, for as long as the list's JSON fits `status_list_bytes`. */
  list(): WorkspaceInstructionsState[] {
    const newestFirst = [...this.#last].reverse().map(([workspace, state]) => ({ workspace, ...state }));
    return fittingPrefix(newestFirst, INSTRUCTIONS_LIMITS.status_list_bytes);
  }
}
