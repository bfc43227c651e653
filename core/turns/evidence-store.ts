import { type Clock, type Deadline, deadlineAt, remainingMs } from '../clock.js';
import { WireError } from '../errors.js';
import { OPERATION_RETENTION_MS, PROFILE_LIMITS } from '../limits.js';
import { clearsAt, Saturation, type SaturationListener } from '../saturation.js';
import type { ActiveTurn } from './active-turn.js';
import type { ApplicationCall } from './application-call.js';
import { callEvidence, evidenceBaseBytes, type TurnEvidence, worstCaseCallBytes } from './call-evidence.js';

export interface EvidenceLimits {
  turns: number;
  bytesPerTurn: number;
  retentionMs: number;
}

interface Retained {
  turn: ActiveTurn;
  bytes: number;
  /** When the turn's terminal was recorded; null while it runs (active work never expires). */
  settledAt: number | null;
}

/** One turn's room in the evidence, taken before the turn is admitted. */
export interface EvidenceSlot {
  /** The turn was admitted: its evidence takes the room. */
  fill(turn: ActiveTurn): void;
  /** The turn was refused: the room is free again. */
  release(): void;
}

export interface EvidenceStats {
  retained: number;
  bound: number;
  saturated: boolean;
  /** Milliseconds until the oldest settled turn's evidence expires; null when no turn has settled. */
  frees_in_ms: number | null;
}

export const evidenceRefusals = {
  turns: () => new WireError('limit_exceeded', 'the daemon retains the maximum number of turns of evidence'),
} as const;

/**
 * Reconnect evidence: what happened to every application call of the turns of the last 600 seconds.
 * Memory only. A turn's evidence is reserved at admission (at most 256 turns), grows by each call's
 * worst case (at most 30 KiB per turn, manifest included), and expires 600 s after the turn's terminal,
 * however often it is read. The bound's saturation and its clearing are told once each.
 */
export class EvidenceStore {
  readonly #clock: Clock;
  readonly #limits: EvidenceLimits;
  readonly #turns = new Map<string, Retained>();
  /** Settled turns in the order they settled, which is the order they expire in. */
  readonly #settled = new Set<string>();
  /** Rooms taken by turns being admitted. */
  #reserved = 0;
  readonly #saturation: Saturation;
  /** Armed while the bound is saturated, for the next expiry, so that its clearing is told in time. */
  #wake: Deadline | null = null;

  constructor(clock: Clock, limits: Partial<EvidenceLimits> = {}, saturation: SaturationListener = () => {}) {
    this.#clock = clock;
    this.#limits = {
      turns: PROFILE_LIMITS.evidence_turns,
      bytesPerTurn: PROFILE_LIMITS.evidence_bytes_per_turn,
      retentionMs: OPERATION_RETENTION_MS,
      ...limits,
    };
    this.#saturation = new Saturation('evidence_turns', saturation);
  }

  /**
   * Takes one turn's room before the turn is admitted, in the same step as the check, so turns admitted
   * together can never pass the bound; refuses when none is left. The slot is filled with the admitted
   * turn, or released when its admission fails.
   */
  reserve(): EvidenceSlot {
    this.#expire();
    if (this.#turns.size + this.#reserved >= this.#limits.turns) {
      this.#saturation.reached({ retained: this.#turns.size + this.#reserved, bound: this.#limits.turns });
      this.#armWake();
      throw evidenceRefusals.turns();
    }
    this.#reserved += 1;
    let open = true;
    const close = (): boolean => {
      if (!open) return false;
      open = false;
      this.#reserved -= 1;
      return true;
    };
    return {
      fill: (turn) => {
        if (!close()) return;
        this.#turns.set(turn.turnId, {
          turn,
          bytes: evidenceBaseBytes(turn.turnId, turn.manifest),
          settledAt: null,
        });
      },
      release: () => {
        if (close()) this.#updateSaturation();
      },
    };
  }

  /** Reserves a call's worst-case evidence; false when the turn's evidence would pass its byte bound. */
  reserveCall(turnId: string, call: ApplicationCall): boolean {
    const retained = this.#turns.get(turnId);
    if (!retained) return false;
    const bytes = retained.bytes + worstCaseCallBytes(call, this.#clock);
    if (bytes > this.#limits.bytesPerTurn) return false;
    retained.bytes = bytes;
    return true;
  }

  settled(turnId: string): void {
    const retained = this.#turns.get(turnId);
    if (!retained || retained.settledAt !== null) return;
    retained.settledAt = this.#clock.now();
    this.#settled.add(turnId);
    this.#armWake();
  }

  /** The turn's evidence for a controller of `sessionId`; `unknown_turn` when absent, expired or foreign. */
  read(sessionId: string, turnId: string): TurnEvidence {
    this.#expire();
    const retained = this.#turns.get(turnId);
    if (!retained || retained.turn.sessionId !== sessionId) throw new WireError('unknown_turn');
    const { turn } = retained;
    return {
      turn_id: turn.turnId,
      application_manifest: turn.manifest,
      calls: [...turn.calls.values()].map((call) => callEvidence(call, this.#clock)),
    };
  }

  /** Turns retained, and turns being admitted. */
  get size(): number {
    this.#expire();
    return this.#turns.size + this.#reserved;
  }

  stats(): EvidenceStats {
    const retained = this.size;
    const oldest = this.#oldestSettledAt();
    return {
      retained,
      bound: this.#limits.turns,
      saturated: this.#saturation.saturated,
      frees_in_ms: oldest === null ? null : remainingMs(oldest + this.#limits.retentionMs, this.#clock),
    };
  }

  #expire(): void {
    const now = this.#clock.now();
    let expired = false;
    for (const turnId of this.#settled) {
      const settledAt = this.#turns.get(turnId)?.settledAt ?? now;
      if (now - settledAt < this.#limits.retentionMs) break;
      this.#settled.delete(turnId);
      this.#turns.delete(turnId);
      expired = true;
    }
    if (expired) this.#updateSaturation();
  }

  #updateSaturation(): void {
    this.#saturation.update(clearsAt(this.#turns.size + this.#reserved, this.#limits.turns), () => ({
      retained: this.#turns.size + this.#reserved,
      bound: this.#limits.turns,
    }));
  }

  #oldestSettledAt(): number | null {
    for (const turnId of this.#settled) return this.#turns.get(turnId)?.settledAt ?? null;
    return null;
  }

  /** While the bound is saturated, wakes at the next expiry to tell its clearing even if nothing is asked. */
  #armWake(): void {
    if (this.#wake || !this.#saturation.saturated) return;
    const oldest = this.#oldestSettledAt();
    if (oldest === null) return;
    this.#wake = deadlineAt(this.#clock, oldest + this.#limits.retentionMs, () => {
      this.#wake = null;
      this.#expire();
      this.#armWake();
    });
  }
}
