import { combinedInstructionBytes, INSTRUCTION_SEPARATOR } from './registry-accounting.js';
import {
  compareByKindThenName,
  type ResourceDescriptor,
  type ResourceRevision,
} from './resource-revision.js';

/**
 * The complete, immutable registry content a turn accepts: every revision of one registry revision, the
 * tools and skills each in name order, and the skills' instructions combined once, joined by newlines.
 * Later registry changes never reach it.
 */
export interface RegistrySnapshot {
  readonly session_id: string;
  readonly registry_revision: string;
  /** Kind first, then name, as listed. */
  readonly resources: readonly ResourceRevision[];
  readonly tools: readonly ResourceRevision[];
  readonly skills: readonly ResourceRevision[];
  readonly descriptors: readonly ResourceDescriptor[];
  /** The skills' instruction texts in name order, one newline between each; empty without skills. */
  readonly instructions: string;
  readonly instruction_bytes: number;
}

export function buildRegistrySnapshot(
  sessionId: string,
  registryRevision: string,
  revisions: Iterable<ResourceRevision>,
): RegistrySnapshot {
  const resources = Object.freeze(
    [...revisions].sort((a, b) => compareByKindThenName(a.descriptor, b.descriptor)),
  );
  const tools = Object.freeze(resources.filter((revision) => revision.kind === 'tool'));
  const skills = Object.freeze(resources.filter((revision) => revision.kind === 'skill'));
  return Object.freeze({
    session_id: sessionId,
    registry_revision: registryRevision,
    resources,
    tools,
    skills,
    descriptors: Object.freeze(resources.map((revision) => revision.descriptor)),
    instructions: skills.map((skill) => skill.instructions ?? '').join(INSTRUCTION_SEPARATOR),
    instruction_bytes: combinedInstructionBytes(skills.map((skill) => skill.instructionBytes)),
  });
}

/** One holder's claim on a turn snapshot; releasing it twice is harmless. */
export interface SnapshotPin {
  readonly snapshot: RegistrySnapshot;
  readonly released: boolean;
  release(): void;
}

/**
 * A turn snapshot and the pins on it. Every turn pinning the same registry revision shares one, so it is
 * charged once; when the last pin is released, `onUnpinned` frees its charge.
 */
export class SharedSnapshot {
  readonly snapshot: RegistrySnapshot;
  readonly #onUnpinned: () => void;
  #pins = 0;

  constructor(snapshot: RegistrySnapshot, onUnpinned: () => void) {
    this.snapshot = snapshot;
    this.#onUnpinned = onUnpinned;
  }

  get pinned(): boolean {
    return this.#pins > 0;
  }

  pin(): SnapshotPin {
    this.#pins += 1;
    let released = false;
    return {
      snapshot: this.snapshot,
      get released() {
        return released;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#unpin();
      },
    };
  }

  #unpin(): void {
    this.#pins -= 1;
    if (this.#pins === 0) this.#onUnpinned();
  }
}
