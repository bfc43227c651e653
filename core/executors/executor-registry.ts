import { inspect } from 'node:util';
import { type Clock, type Deadline, deadlineAt } from '../clock.js';
import { matchesVerifier, verifierOf } from '../hashing.js';
import { newId, newSecret } from '../ids.js';
import { PROFILE_LIMITS } from '../limits.js';
import { executorRefusals } from './executor-refusals.js';
import type {
  ExecutorAttachResult,
  ExecutorCreateResult,
  ExecutorGenerationPayload,
  ExecutorIdentity,
  ExecutorProofPayload,
  ExecutorReleaseResult,
  ExecutorRotateConfirmPayload,
  ExecutorRotateConfirmResult,
  ExecutorRotateResult,
} from './executor-types.js';
import { boundPendingCalls, noPendingCalls, type PendingCallSource } from './pending-calls.js';

export type ExecutorRemovalReason = 'released' | 'expired' | 'cleared';

export interface ExecutorRegistryOptions {
  clock: Clock;
  /** The calls still waiting on an executor, reported by confirm and resume. */
  pendingCalls?: PendingCallSource;
  /** Told when an executor stops existing, so whoever waits on it can fail its calls. */
  onRemoved?: (executorId: string, reason: ExecutorRemovalReason) => void;
}

export type ExecutorState = 'provisional' | 'attached' | 'detached';

/** The registry's debug view of one executor: state only, never a proof or a verifier. */
export interface ExecutorView {
  executor_id: string;
  executor_generation: number;
  state: ExecutorState;
  connection_id: string | null;
  pins: number;
  rotation_pending: boolean;
}

interface Candidate {
  readonly verifier: Buffer;
  readonly deadline: Deadline;
}

interface ExecutorRecord {
  readonly id: string;
  generation: number;
  verifier: Buffer;
  confirmed: boolean;
  /** The issuing connection while provisional, the attached one once confirmed; null after disconnect. */
  connectionId: string | null;
  pins: number;
  candidate: Candidate | null;
  /** The confirmation deadline while provisional; the idle deadline while confirmed, detached and unpinned. */
  expiry: Deadline | null;
}

/**
 * Compared against when the named executor does not exist, so an unknown id costs the same hash
 * comparison as a wrong secret. No secret is ever issued for it.
 */
const ABSENT_VERIFIER = verifierOf(newSecret());

/**
 * Executor authority: which executors exist, which proof each accepts, and which connection each is
 * attached to. Only SHA-256 verifiers of resume secrets are kept; a secret leaves this class once, in
 * the create or rotate result that issues it.
 *
 * Every deadline is both a timer (so capacity is freed on time) and a comparison against the clock
 * on each access (so a request arriving exactly at a deadline loses even before its timer runs).
 */
export class ExecutorRegistry {
  readonly #clock: Clock;
  #pendingCalls: PendingCallSource;
  readonly #onRemoved: ((executorId: string, reason: ExecutorRemovalReason) => void) | undefined;
  readonly #executors = new Map<string, ExecutorRecord>();
  /** The one executor, provisional or confirmed, that each connection holds. */
  readonly #byConnection = new Map<string, string>();

  constructor(options: ExecutorRegistryOptions) {
    this.#clock = options.clock;
    this.#pendingCalls = options.pendingCalls ?? noPendingCalls;
    this.#onRemoved = options.onRemoved;
  }

  /** `executor.create`: a provisional executor held by `connectionId`, to be confirmed within 60 s. */
  create(connectionId: string): ExecutorCreateResult {
    if (this.#heldBy(connectionId)) throw executorRefusals.connectionHasExecutor();
    if (this.size >= PROFILE_LIMITS.executors) throw executorRefusals.tooManyExecutors();
    const secret = newSecret();
    const record: ExecutorRecord = {
      id: newId('exe'),
      generation: 1,
      verifier: verifierOf(secret),
      confirmed: false,
      connectionId,
      pins: 0,
      candidate: null,
      expiry: null,
    };
    this.#executors.set(record.id, record);
    this.#byConnection.set(connectionId, record.id);
    record.expiry = this.#deadline(PROFILE_LIMITS.executor_confirm_timeout_ms, () => this.#refresh(record));
    return { executor_id: record.id, executor_generation: 1, resume_secret: secret };
  }

  /** `executor.confirm`: only the issuing connection, only while provisional; the generation stays. */
  confirm(connectionId: string, payload: ExecutorProofPayload): ExecutorAttachResult {
    const record = this.#find(payload.executor_id);
    const proven = matchesVerifier(payload.resume_secret, record?.verifier ?? ABSENT_VERIFIER);
    if (!record || !proven) throw executorRefusals.invalidProof();
    if (record.confirmed || record.connectionId !== connectionId) throw executorRefusals.notConfirmable();
    record.confirmed = true;
    this.#cancelExpiry(record);
    return this.#attachResult(record);
  }

  /**
   * `executor.resume`: confirms a provisional executor or reattaches a confirmed one to `connectionId`,
   * with a new generation. The current proof cancels a pending rotation; the candidate promotes it.
   * The previously attached connection is fenced: it no longer holds the executor.
   */
  resume(connectionId: string, payload: ExecutorProofPayload): ExecutorAttachResult {
    const record = this.#find(payload.executor_id);
    const byProof = matchesVerifier(payload.resume_secret, record?.verifier ?? ABSENT_VERIFIER);
    const byCandidate = matchesVerifier(
      payload.resume_secret,
      record?.candidate?.verifier ?? ABSENT_VERIFIER,
    );
    if (!record || (!byProof && !byCandidate)) throw executorRefusals.invalidProof();
    const held = this.#heldBy(connectionId);
    if (held && held !== record) throw executorRefusals.connectionHasExecutor();

    if (byCandidate && record.candidate) record.verifier = record.candidate.verifier;
    this.#dropCandidate(record);
    if (record.connectionId !== null) this.#byConnection.delete(record.connectionId);
    record.connectionId = connectionId;
    this.#byConnection.set(connectionId, record.id);
    record.confirmed = true;
    record.generation += 1;
    this.#cancelExpiry(record);
    return this.#attachResult(record);
  }

  /** `executor.rotate`: a fresh candidate proof beside the current one; a new rotation replaces it. */
  rotate(connectionId: string, payload: ExecutorGenerationPayload): ExecutorRotateResult {
    const record = this.#heldRecord(connectionId, payload.executor_id);
    this.#assertAttachedAt(record, connectionId, payload.executor_generation);
    const secret = newSecret();
    const pendingTimeoutMs = PROFILE_LIMITS.executor_rotation_timeout_ms;
    this.#dropCandidate(record);
    record.candidate = {
      verifier: verifierOf(secret),
      deadline: this.#deadline(pendingTimeoutMs, () => this.#refresh(record)),
    };
    return {
      executor_id: record.id,
      executor_generation: record.generation,
      resume_secret: secret,
      status: 'rotation_pending',
      pending_timeout_ms: pendingTimeoutMs,
    };
  }

  /**
   * `executor.rotate_confirm`: the candidate becomes the only proof; the generation stays. Holding the
   * executor, or presenting its current or candidate secret, proves authority; without either, an existing
   * executor is refused exactly like an unknown one. Only the candidate confirms.
   */
  rotateConfirm(connectionId: string, payload: ExecutorRotateConfirmPayload): ExecutorRotateConfirmResult {
    const record = this.#find(payload.executor_id);
    const byProof = matchesVerifier(payload.resume_secret, record?.verifier ?? ABSENT_VERIFIER);
    const byCandidate = matchesVerifier(
      payload.resume_secret,
      record?.candidate?.verifier ?? ABSENT_VERIFIER,
    );
    if (!record || (!byProof && !byCandidate && record.connectionId !== connectionId)) {
      throw executorRefusals.invalidProof();
    }
    this.#assertAttachedAt(record, connectionId, payload.executor_generation);
    const candidate = record.candidate;
    if (!candidate) throw executorRefusals.noPendingRotation();
    if (!byCandidate) throw executorRefusals.invalidProof();
    record.verifier = candidate.verifier;
    this.#dropCandidate(record);
    return { executor_id: record.id, executor_generation: record.generation };
  }

  /** `executor.release`: both proofs stop working and the executor is gone; its calls go nowhere else. */
  release(connectionId: string, payload: ExecutorGenerationPayload): ExecutorReleaseResult {
    const record = this.#heldRecord(connectionId, payload.executor_id);
    if (record.generation !== payload.executor_generation) throw executorRefusals.notHeldByConnection();
    const generation = record.generation;
    this.#remove(record, 'released');
    return { executor_id: record.id, executor_generation: generation, status: 'released' };
  }

  /**
   * The connection is gone. A confirmed executor detaches and starts its idle timer unless pinned; a
   * provisional one keeps its confirmation deadline and can now only be resumed. A pending rotation
   * keeps its own deadline.
   */
  connectionClosed(connectionId: string): void {
    const executorId = this.#byConnection.get(connectionId);
    if (executorId === undefined) return;
    this.#byConnection.delete(connectionId);
    const record = this.#executors.get(executorId);
    if (!record) return;
    record.connectionId = null;
    this.#startIdleIfDetached(record);
  }

  /** The confirmed executor attached to `connectionId`, if any. */
  attachedTo(connectionId: string): ExecutorIdentity | null {
    const record = this.#heldBy(connectionId);
    if (!record?.confirmed) return null;
    return { executor_id: record.id, executor_generation: record.generation };
  }

  /** Where callback events for `executorId` go: its attached connection and current generation. */
  attachmentOf(executorId: string): { connection_id: string; executor_generation: number } | null {
    const record = this.#find(executorId);
    if (!record?.confirmed || record.connectionId === null) return null;
    return { connection_id: record.connectionId, executor_generation: record.generation };
  }

  /** Whether `secret` is one of the executor's proofs, current or candidate; refuses nothing. */
  proves(executorId: unknown, secret: unknown): boolean {
    const record = this.#find(executorId);
    return (
      (matchesVerifier(secret, record?.verifier ?? ABSENT_VERIFIER) ||
        matchesVerifier(secret, record?.candidate?.verifier ?? ABSENT_VERIFIER)) &&
      record !== undefined
    );
  }

  /** Whether `connectionId` holds the executor, provisional or confirmed, at any generation. */
  isHeldBy(executorId: unknown, connectionId: string): boolean {
    return this.#find(executorId)?.connectionId === connectionId;
  }

  /** Whether `connectionId` holds the confirmed attachment of `executorId` at exactly `generation`. */
  isCurrent(executorId: string, generation: number, connectionId: string): boolean {
    const record = this.#find(executorId);
    if (!record?.confirmed) return false;
    return record.connectionId === connectionId && record.generation === generation;
  }

  /**
   * Marks `executorId` as needed by a turn: while pinned, a detached confirmed executor does not expire.
   * Returns false when the executor does not exist.
   */
  pin(executorId: string): boolean {
    const record = this.#find(executorId);
    if (!record) return false;
    record.pins += 1;
    if (record.confirmed) this.#cancelExpiry(record);
    return true;
  }

  /** Undoes one pin; the idle timer of a detached executor starts when its last pin goes. */
  unpin(executorId: string): void {
    const record = this.#find(executorId);
    if (!record || record.pins === 0) return;
    record.pins -= 1;
    this.#startIdleIfDetached(record);
  }

  /** Where confirm and resume find the calls still waiting on an executor: the turn engine's. */
  providePendingCalls(source: PendingCallSource): void {
    this.#pendingCalls = source;
  }

  /** Live executors, provisional ones included: what counts against PROFILE_LIMITS.executors. */
  get size(): number {
    this.#sweep();
    return this.#executors.size;
  }

  /** Restart or shutdown: every executor and both of its proofs are gone. */
  clear(): void {
    const records = [...this.#executors.values()];
    for (const record of records) {
      record.expiry?.cancel();
      record.candidate?.deadline.cancel();
    }
    this.#executors.clear();
    this.#byConnection.clear();
    for (const record of records) this.#onRemoved?.(record.id, 'cleared');
  }

  /** The debug view: states only. */
  view(): ExecutorView[] {
    this.#sweep();
    return [...this.#executors.values()].map((record) => ({
      executor_id: record.id,
      executor_generation: record.generation,
      state: !record.confirmed ? 'provisional' : record.connectionId === null ? 'detached' : 'attached',
      connection_id: record.connectionId,
      pins: record.pins,
      rotation_pending: record.candidate !== null,
    }));
  }

  toJSON(): { executors: ExecutorView[] } {
    return { executors: this.view() };
  }

  [inspect.custom](): string {
    return `ExecutorRegistry ${inspect(this.toJSON(), { depth: 4 })}`;
  }

  #attachResult(record: ExecutorRecord): ExecutorAttachResult {
    return {
      executor_id: record.id,
      executor_generation: record.generation,
      pending_calls: boundPendingCalls(this.#pendingCalls(record.id)),
    };
  }

  /**
   * The executor `connectionId` holds, provisional or confirmed, at any generation. Rotate and release
   * carry no secret, so holding the executor is their only proof: a connection that does not hold an
   * existing executor is refused exactly like one naming an unknown executor.
   */
  #heldRecord(connectionId: string, executorId: string): ExecutorRecord {
    const record = this.#find(executorId);
    if (!record || record.connectionId !== connectionId) throw executorRefusals.invalidProof();
    return record;
  }

  /** For a caller that proved authority: the executor must be confirmed, attached here, at `generation`. */
  #assertAttachedAt(record: ExecutorRecord, connectionId: string, generation: number): void {
    if (!record.confirmed || record.connectionId !== connectionId || record.generation !== generation) {
      throw executorRefusals.notHeldByConnection();
    }
  }

  #sweep(): void {
    for (const record of [...this.#executors.values()]) this.#refresh(record);
  }

  #heldBy(connectionId: string): ExecutorRecord | undefined {
    const executorId = this.#byConnection.get(connectionId);
    return executorId === undefined ? undefined : this.#find(executorId);
  }

  #find(executorId: unknown): ExecutorRecord | undefined {
    if (typeof executorId !== 'string') return undefined;
    const record = this.#executors.get(executorId);
    return record && this.#refresh(record) ? record : undefined;
  }

  /** Applies every deadline that has been reached; false when the executor itself is gone. */
  #refresh(record: ExecutorRecord): boolean {
    if (this.#executors.get(record.id) !== record) return false;
    const now = this.#clock.now();
    if (record.expiry && now >= record.expiry.at) {
      this.#remove(record, 'expired');
      return false;
    }
    if (record.candidate && now >= record.candidate.deadline.at) this.#dropCandidate(record);
    return true;
  }

  #startIdleIfDetached(record: ExecutorRecord): void {
    if (!record.confirmed || record.connectionId !== null || record.pins > 0 || record.expiry) return;
    record.expiry = this.#deadline(PROFILE_LIMITS.executor_idle_timeout_ms, () => this.#refresh(record));
  }

  #cancelExpiry(record: ExecutorRecord): void {
    record.expiry?.cancel();
    record.expiry = null;
  }

  #dropCandidate(record: ExecutorRecord): void {
    record.candidate?.deadline.cancel();
    record.candidate = null;
  }

  #remove(record: ExecutorRecord, reason: ExecutorRemovalReason): void {
    this.#cancelExpiry(record);
    this.#dropCandidate(record);
    this.#executors.delete(record.id);
    if (record.connectionId !== null && this.#byConnection.get(record.connectionId) === record.id) {
      this.#byConnection.delete(record.connectionId);
    }
    this.#onRemoved?.(record.id, reason);
  }

  /** A deadline `ms` from now; see deadlineAt for why it never acts early. */
  #deadline(ms: number, onReached: () => void): Deadline {
    return deadlineAt(this.#clock, this.#clock.now() + ms, onReached);
  }
}
