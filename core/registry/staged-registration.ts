import type { Deadline } from '../clock.js';
import type { ConfinedWorkspace } from '../confinement/confined-workspace.js';
import { isWireError, WireError } from '../errors.js';
import type { ResourceInput } from '../resources/resource-input.js';
import { registryRefusals } from './registry-refusals.js';
import type { RegisteredBy, ResourceDescriptor, ResourceRevision } from './resource-revision.js';
import type { SessionRegistry } from './session-registry.js';

/**
 * Whether the registering request still holds what it held when it was admitted: its connection, the
 * session's control generation and its operation (still accepted, not settled elsewhere). Returns false, or
 * throws its own refusal, when any of them no longer holds.
 */
export type RegistrationGuard = () => boolean;

export interface RegisterResult {
  entry: ResourceDescriptor;
  registry_revision: string;
}

/** What was decided at admission, before anything was read. */
export interface RegistrationPlan {
  readonly sessionId: string;
  /** The registry the registration was admitted against; publication requires it to be still current. */
  readonly registry: SessionRegistry;
  readonly input: ResourceInput;
  readonly expectedRevision: string | null;
  /** The replaced resource's id, or null for a creation. */
  readonly resourceId: string | null;
  /** The session's workspace, for a workspace_file source. */
  readonly workspace: ConfinedWorkspace | null;
  readonly registeredBy: RegisteredBy;
  readonly guard: RegistrationGuard;
}

/** The registry's side of a staged registration. */
export interface StagingHost {
  /** Reads the source (a workspace file off the event loop) and applies the content rules. */
  capture(plan: RegistrationPlan): Promise<ResourceRevision>;
  /** Rechecks everything publication depends on and commits; does not release the slot. */
  publish(plan: RegistrationPlan, revision: ResourceRevision): RegisterResult;
  /** Frees the capture slot; called exactly once per staged registration. */
  releaseSlot(staged: StagedRegistration): void;
  /** Arms the registration deadline, which discards the registration when reached. */
  deadline(onReached: () => void): Deadline;
  /** The monotonic time, to decide the deadline at publication even before its timer has run. */
  now(): number;
}

export type StagedState = 'staged' | 'capturing' | 'captured' | 'published' | 'discarded';

/**
 * A registration admitted and holding the daemon's one capture slot: `capture()` reads the source,
 * `publish()` rechecks and commits, `discard()` gives up. A discard while the source is being read
 * answers the waiting `capture()` at once with the discard's refusal, and the read's result is dropped when
 * it comes.
 *
 * The slot is released once the registration has ended (published, failed or discarded: by its caller,
 * by the registry when the session's control changes, or by its deadline) and no read of it is still in
 * progress: a filesystem wait cannot be interrupted, so the slot stays charged until the read returns.
 * It is released exactly once.
 */
export class StagedRegistration {
  readonly #host: StagingHost;
  readonly #plan: RegistrationPlan;
  readonly #deadline: Deadline;
  #state: StagedState = 'staged';
  #revision: ResourceRevision | null = null;
  #reading = false;
  #interrupt: ((refusal: WireError) => void) | null = null;

  constructor(host: StagingHost, plan: RegistrationPlan) {
    this.#host = host;
    this.#plan = plan;
    this.#deadline = host.deadline(() => this.discard(registryRefusals.deadlinePassed()));
  }

  get sessionId(): string {
    return this.#plan.sessionId;
  }

  get state(): StagedState {
    return this.#state;
  }

  /** Reads and validates the source. A refusal, or a discard meanwhile, ends the registration and throws. */
  async capture(): Promise<void> {
    this.#assertLive();
    if (this.#state !== 'staged') throw this.#misuse();
    this.#state = 'capturing';
    this.#reading = true;
    const read = this.#host.capture(this.#plan).finally(() => {
      this.#reading = false;
      if (this.#ended) this.#host.releaseSlot(this);
    });
    const interrupted = new Promise<never>((_, reject) => {
      this.#interrupt = reject;
    });
    try {
      const revision = await Promise.race([read, interrupted]);
      this.#revision = revision;
      this.#state = 'captured';
    } catch (error) {
      this.#end('discarded');
      throw isWireError(error) ? error : new WireError('internal_error');
    } finally {
      this.#interrupt = null;
    }
  }

  /** Rechecks and commits the captured revision; whatever happens, the registration ends. */
  publish(): RegisterResult {
    this.#assertLive();
    const revision = this.#revision;
    if (this.#state !== 'captured' || revision === null) throw this.#misuse();
    if (this.#host.now() >= this.#deadline.at) {
      const refusal = registryRefusals.deadlinePassed();
      this.discard(refusal);
      throw refusal;
    }
    try {
      const result = this.#host.publish(this.#plan, revision);
      this.#end('published');
      return result;
    } finally {
      this.#end('discarded');
    }
  }

  /**
   * Gives up: the staged capture is dropped. A `capture()` still waiting for its read is answered with
   * `refusal`. Harmless once ended.
   */
  discard(refusal: WireError = registryRefusals.stagingDiscarded()): void {
    if (this.#ended) return;
    this.#interrupt?.(refusal);
    this.#end('discarded');
  }

  get #ended(): boolean {
    return this.#state === 'published' || this.#state === 'discarded';
  }

  #assertLive(): void {
    if (this.#state === 'discarded') throw registryRefusals.stagingDiscarded();
  }

  /** A call out of order is the caller's bug; the registration still ends so the daemon keeps working. */
  #misuse(): WireError {
    this.#end('discarded');
    return new WireError('internal_error');
  }

  #end(state: 'published' | 'discarded'): void {
    if (this.#ended) return;
    this.#state = state;
    this.#revision = null;
    this.#deadline.cancel();
    if (!this.#reading) this.#host.releaseSlot(this);
  }
}
