/**
 * The registry's storage accounting, exactly. Every byte count is of UTF-8 (JSON encoded compactly, as
 * `JSON.stringify` writes it).
 *
 * One resource revision (immutable; shared by reference between its registry and every turn snapshot that
 * pinned it) is charged
 *
 *   revision bytes = captured bytes                 (the exact source bytes, kept in memory)
 *                  + normalized bytes               (tool: the normalized contract as JSON;
 *                                                    skill: the instruction text, which is the captured text)
 *                  + descriptor bytes               (the descriptor as JSON, attribution included)
 *
 * One session registry is bounded by
 *
 *   registry bytes       = Σ revision bytes over its entries                       ≤ registry_bytes
 *   combined skill bytes = Σ instruction bytes over its skills + (skills − 1)      ≤ combined_skill_bytes
 *                          (the skills joined by one newline each; 0 without skills)
 *   tools ≤ tools_per_session, skills ≤ skills_per_session
 *
 * Across the daemon, where a revision is live while its registry or any pinned turn snapshot holds it and a
 * turn snapshot is live while any pin holds it:
 *
 *   retained entries   = number of distinct live revisions                         ≤ retained_entries
 *   retained snapshots = number of live turn snapshots                             ≤ retained_snapshots
 *   retained bytes     = Σ revision bytes over distinct live revisions
 *                      + Σ combined instruction bytes over live turn snapshots
 *                      + capture_reservation_bytes while the capture slot is held  ≤ retained_bytes
 *
 * Turns that pin the same registry revision share one turn snapshot, which is counted once.
 */
export interface RevisionByteParts {
  capturedBytes: number;
  normalizedBytes: number;
  descriptorBytes: number;
}

export function revisionBytes(parts: RevisionByteParts): number {
  return parts.capturedBytes + parts.normalizedBytes + parts.descriptorBytes;
}

/** The byte length of instruction texts joined by one newline each. */
export function combinedInstructionBytes(instructionBytes: Iterable<number>): number {
  let total = 0;
  let count = 0;
  for (const bytes of instructionBytes) {
    total += bytes;
    count += 1;
  }
  return count === 0 ? 0 : total + count - 1;
}

/** The separator of combined skill instructions. */
export const INSTRUCTION_SEPARATOR = '\n';
