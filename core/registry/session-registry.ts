import type { Deadline } from '../clock.js';
import { newId } from '../ids.js';
import type { ResourceKind } from '../resources/names.js';
import { combinedInstructionBytes } from './registry-accounting.js';
import type { SharedSnapshot } from './registry-snapshot.js';
import {
  compareByKindThenName,
  type ResourceDescriptor,
  type ResourceRevision,
} from './resource-revision.js';

/**
 * One session's registry: its current revisions by name (tools and skills share one namespace), its
 * registry revision, and its local bookkeeping. Every change allocates a fresh, unpredictable registry
 * revision and forgets the turn snapshot shared for the previous one. Budgets are checked by the caller.
 */
export class SessionRegistry {
  readonly sessionId: string;
  #revision = newId('reg');
  readonly #entries = new Map<string, ResourceRevision>();
  #bytes = 0;
  /** Whether the session has a current controller. A registry is created only for its controller. */
  claimed = true;
  /** The pending idle expiry of an unclaimed, unprotected registry. */
  idle: Deadline | null = null;
  /** The turn snapshot of the current registry revision while some turn pins it. */
  shared: SharedSnapshot | null = null;

  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }

  get revision(): string {
    return this.#revision;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Registry bytes: the sum of its revisions' charges. */
  get bytes(): number {
    return this.#bytes;
  }

  named(name: string): ResourceRevision | undefined {
    return this.#entries.get(name);
  }

  withResourceId(resourceId: string): ResourceRevision | undefined {
    for (const revision of this.#entries.values()) if (revision.resourceId === resourceId) return revision;
    return undefined;
  }

  count(kind: ResourceKind): number {
    let count = 0;
    for (const revision of this.#entries.values()) if (revision.kind === kind) count++;
    return count;
  }

  /** Combined skill bytes if the skill `name` had `instructionBytes` (null: if it were absent). */
  combinedSkillBytesWith(name: string, instructionBytes: number | null): number {
    const sizes: number[] = [];
    for (const revision of this.#entries.values()) {
      if (revision.kind === 'skill' && revision.name !== name) sizes.push(revision.instructionBytes);
    }
    if (instructionBytes !== null) sizes.push(instructionBytes);
    return combinedInstructionBytes(sizes);
  }

  revisions(): ResourceRevision[] {
    return [...this.#entries.values()];
  }

  descriptors(): ResourceDescriptor[] {
    return this.revisions()
      .map((revision) => revision.descriptor)
      .sort(compareByKindThenName);
  }

  /** Adds or replaces the revision of its name; returns the one it replaced. */
  put(revision: ResourceRevision): ResourceRevision | undefined {
    const previous = this.#entries.get(revision.name);
    if (previous) this.#bytes -= previous.chargedBytes;
    this.#entries.set(revision.name, revision);
    this.#bytes += revision.chargedBytes;
    this.#changed();
    return previous;
  }

  remove(revision: ResourceRevision): void {
    if (this.#entries.get(revision.name) !== revision) return;
    this.#entries.delete(revision.name);
    this.#bytes -= revision.chargedBytes;
    this.#changed();
  }

  /** Removes every revision and returns them; an empty registry keeps its revision. */
  clear(): ResourceRevision[] {
    const removed = this.revisions();
    if (removed.length === 0) return removed;
    this.#entries.clear();
    this.#bytes = 0;
    this.#changed();
    return removed;
  }

  #changed(): void {
    this.#revision = newId('reg');
    this.shared = null;
  }
}
