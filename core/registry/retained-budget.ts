import type { RegistryLimits } from './registry-limits.js';
import { registryRefusals } from './registry-refusals.js';
import type { ResourceRevision } from './resource-revision.js';

/** The daemon-wide figures of the registry accounting, for the debug view: counts and bytes, no names. */
export interface RetainedFigures {
  retained_entries: number;
  retained_snapshots: number;
  retained_bytes: number;
  capture_slot_busy: boolean;
}

/**
 * The daemon-wide side of the accounting in registry-accounting.ts: distinct live revisions (reference
 * counted, so a revision held by its registry and by pinned turn snapshots is charged once), live turn
 * snapshots with their combined instructions, and the one capture slot. Checks refuse with
 * `limit_exceeded`; nothing is ever evicted to make room.
 */
export class RetainedBudget {
  readonly #limits: RegistryLimits;
  readonly #references = new Map<ResourceRevision, number>();
  #revisionBytes = 0;
  #snapshots = 0;
  #snapshotBytes = 0;
  #captureHeld = false;

  constructor(limits: RegistryLimits) {
    this.#limits = limits;
  }

  get entries(): number {
    return this.#references.size;
  }

  get snapshots(): number {
    return this.#snapshots;
  }

  get bytes(): number {
    return this.#revisionBytes + this.#snapshotBytes + this.#captureBytes();
  }

  get captureHeld(): boolean {
    return this.#captureHeld;
  }

  figures(): RetainedFigures {
    return {
      retained_entries: this.entries,
      retained_snapshots: this.snapshots,
      retained_bytes: this.bytes,
      capture_slot_busy: this.#captureHeld,
    };
  }

  /** One more revision would fit the entry count; checked before a capture starts. */
  assertEntryRoom(): void {
    if (this.entries + 1 > this.#limits.retained_entries) throw registryRefusals.retainedEntries();
  }

  /** Takes the capture slot with its byte reservation. */
  reserveCapture(): void {
    if (this.#captureHeld) throw registryRefusals.captureBusy();
    if (this.bytes + this.#limits.capture_reservation_bytes > this.#limits.retained_bytes) {
      throw registryRefusals.retainedBytes();
    }
    this.#captureHeld = true;
  }

  releaseCapture(): void {
    this.#captureHeld = false;
  }

  /**
   * A published revision must fit in addition to everything retained now, the revision it replaces
   * included: the slot's reservation is the only charge it may take over.
   */
  assertRevisionRoom(revision: ResourceRevision): void {
    this.assertEntryRoom();
    const after = this.bytes - this.#captureBytes() + revision.chargedBytes;
    if (after > this.#limits.retained_bytes) throw registryRefusals.retainedBytes();
  }

  assertSnapshotRoom(instructionBytes: number): void {
    if (this.#snapshots + 1 > this.#limits.retained_snapshots) throw registryRefusals.retainedSnapshots();
    if (this.bytes + instructionBytes > this.#limits.retained_bytes) throw registryRefusals.retainedBytes();
  }

  /** One more holder of `revision`; the first charges its bytes. */
  retain(revision: ResourceRevision): void {
    const count = this.#references.get(revision) ?? 0;
    if (count === 0) this.#revisionBytes += revision.chargedBytes;
    this.#references.set(revision, count + 1);
  }

  /** One holder fewer; the last frees its bytes. */
  release(revision: ResourceRevision): void {
    const count = this.#references.get(revision);
    if (count === undefined) return;
    if (count > 1) {
      this.#references.set(revision, count - 1);
      return;
    }
    this.#references.delete(revision);
    this.#revisionBytes -= revision.chargedBytes;
  }

  addSnapshot(instructionBytes: number): void {
    this.#snapshots += 1;
    this.#snapshotBytes += instructionBytes;
  }

  removeSnapshot(instructionBytes: number): void {
    this.#snapshots -= 1;
    this.#snapshotBytes -= instructionBytes;
  }

  #captureBytes(): number {
    return this.#captureHeld ? this.#limits.capture_reservation_bytes : 0;
  }
}
