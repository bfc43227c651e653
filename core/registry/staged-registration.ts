import { WireError } from '../errors.js';
import type { ResourceInput } from '../resources/resource-input.js';
import { registryRefusals } from './registry-refusals.js';
import type { RegisteredBy, ResourceDescriptor, ResourceRevision } from './resource-revision.js';
import type { SessionRegistry } from './session-registry.js';

/**
 * Whether the registering request still holds what it held when it was admitted: its connection, the
 * session's control generation, its operation (still accepted, not settled elsewhere) and its deadline.
 * Returns false, or throws its own refusal, when any of them no longer holds.
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
  readonly workspace: string | null;
  readonly registeredBy: RegisteredBy;
  readonly guard: RegistrationGuard;
}

/** The registry's side of a staged registration. */
export interface StagingHost {
  /** Reads the source and applies the content rules; synchronous, as the workspace walk must be. */
  capture(plan: RegistrationPlan): ResourceRevision;
  /** Rechecks everything publication depends on and commits; does not release the slot. */
  publish(plan: RegistrationPlan, revision: ResourceRevision): RegisterResult;
  /** Frees the capture slot; called exactly once per staged registration. */
  releaseSlot(staged: StagedRegistration): void;
}

export type StagedState = 'staged' | 'captured' | 'published' | 'discarded';

/**
 * A registration admitted and holding the daemon's one capture slot: `capture()` reads the source,
 * `publish()` rechecks and commits, `discard()` gives up. The slot is released when the registration
 * publishes, fails, or is discarded (by its caller, or by the registry when the session's control
 * changes), whichever comes first, and never twice.
 */
export class StagedRegistration {
  readonly #host: StagingHost;
  readonly #plan: RegistrationPlan;
  #state: StagedState = 'staged';
  #revision: ResourceRevision | null = null;

  constructor(host: StagingHost, plan: RegistrationPlan) {
    this.#host = host;
    this.#plan = plan;
  }

  get sessionId(): string {
    return this.#plan.sessionId;
  }

  get state(): StagedState {
    return this.#state;
  }

  /** Reads and validates the source. A refusal discards the registration and is rethrown. */
  capture(): void {
    this.#assertLive();
    if (this.#state !== 'staged') throw this.#misuse();
    try {
      this.#revision = this.#host.capture(this.#plan);
      this.#state = 'captured';
    } catch (error) {
      this.#finish('discarded');
      throw error;
    }
  }

  /** Rechecks and commits the captured revision; whatever happens, the slot is released. */
  publish(): RegisterResult {
    this.#assertLive();
    const revision = this.#revision;
    if (this.#state !== 'captured' || revision === null) throw this.#misuse();
    try {
      const result = this.#host.publish(this.#plan, revision);
      this.#finish('published');
      return result;
    } finally {
      this.#finish('discarded');
    }
  }

  /** Gives up: the staged capture is dropped and the slot released. Harmless once finished. */
  discard(): void {
    this.#finish('discarded');
  }

  #assertLive(): void {
    if (this.#state === 'discarded') throw registryRefusals.stagingDiscarded();
  }

  /** A call out of order is the caller's bug; the slot is still released so the daemon keeps working. */
  #misuse(): WireError {
    this.#finish('discarded');
    return new WireError('internal_error');
  }

  #finish(state: 'published' | 'discarded'): void {
    if (this.#state === 'published' || this.#state === 'discarded') return;
    this.#state = state;
    this.#revision = null;
    this.#host.releaseSlot(this);
  }
}
