import type { WorkspaceReader } from '../capture/workspace-reader.js';
import { type Clock, deadlineAt } from '../clock.js';
import type { ConfinedWorkspace } from '../confinement/confined-workspace.js';
import { WireError } from '../errors.js';
import { newId } from '../ids.js';
import {
  type CapturedContent,
  sourceMaxBytes,
  validateCapturedSource,
} from '../resources/captured-source.js';
import type { NameCatalog, ResourceKind } from '../resources/names.js';
import type { ResourceInput } from '../resources/resource-input.js';
import { utf8ByteLength } from '../resources/unicode.js';
import { RegistryLifetimes } from './registry-lifetimes.js';
import { type RegistryLimits, registryLimits } from './registry-limits.js';
import { parseClearPayload, parseRegisterPayload, parseUnregisterPayload } from './registry-payloads.js';
import { registryRefusals } from './registry-refusals.js';
import { buildRegistrySnapshot, SharedSnapshot, type SnapshotPin } from './registry-snapshot.js';
import { type RegisteredBy, type ResourceDescriptor, ResourceRevision } from './resource-revision.js';
import { RetainedBudget, type RetainedFigures } from './retained-budget.js';
import type { SessionRegistry } from './session-registry.js';
import {
  type RegisterResult,
  type RegistrationGuard,
  type RegistrationPlan,
  StagedRegistration,
  type StagingHost,
} from './staged-registration.js';

export interface ResourceRegistryOptions {
  clock: Clock;
  /** The loaded name catalog, read at admission, at publication and when a turn takes its snapshot. */
  catalog: () => NameCatalog;
  /** The session's workspace, pinned, for workspace_file sources. */
  workspaceOf: (sessionId: string) => ConfinedWorkspace;
  /** The daemon's own state directories, which captures never reach. */
  excludedDirectories: readonly string[];
  /** Reads workspace files off the event loop: the daemon's capture worker. */
  reader: WorkspaceReader;
  /** Smaller bounds, so tests can reach saturation; the daemon runs with the profile's bounds. */
  limits?: Partial<RegistryLimits>;
}

export interface RegistryListing {
  registry_revision: string;
  entries: ResourceDescriptor[];
}

export interface UnregisterResult {
  resource_id: string;
  removed_revision: string;
  registry_revision: string;
}

export interface ClearResult {
  registry_revision: string;
  removed_count: number;
}

/** The debug view: counts and bytes only, never a name, a body or a path. */
export interface RegistryStats extends RetainedFigures {
  registries: number;
  claimed_registries: number;
  idle_registries: number;
  protected_sessions: number;
  registered_resources: number;
}

/**
 * The daemon's session resource registries (one instance per daemon). Callers authorize the session's
 * controller first; `list`, `beginRegistration`, `unregister` and `clear` are only ever called on behalf
 * of the current controller, so a registry they create starts claimed.
 *
 * Lifetime: a registry exists from its first list or registration. While unclaimed and unprotected it
 * expires `registry_idle_timeout_ms` after the last protection ended; an empty one goes as soon as it is
 * unclaimed. Every entry point checks the deadline against the clock first, so at the deadline expiry wins
 * over a claim that arrives before the timer has run.
 *
 * Accounting: see registry-accounting.ts. Saturation refuses with `limit_exceeded`; nothing is evicted.
 */
export class ResourceRegistry {
  readonly #clock: Clock;
  readonly #catalog: () => NameCatalog;
  readonly #workspaceOf: (sessionId: string) => ConfinedWorkspace;
  readonly #excludedDirectories: readonly string[];
  readonly #reader: WorkspaceReader;
  readonly #limits: RegistryLimits;
  readonly #budget: RetainedBudget;
  readonly #lifetimes: RegistryLifetimes;
  #staged: StagedRegistration | null = null;
  readonly #host: StagingHost;

  constructor(options: ResourceRegistryOptions) {
    this.#clock = options.clock;
    this.#catalog = options.catalog;
    this.#workspaceOf = options.workspaceOf;
    this.#excludedDirectories = Object.freeze([...options.excludedDirectories]);
    this.#reader = options.reader;
    this.#limits = registryLimits(options.limits);
    this.#budget = new RetainedBudget(this.#limits);
    this.#lifetimes = new RegistryLifetimes(this.#clock, this.#limits, this.#budget);
    this.#host = {
      capture: (plan) => this.#capture(plan),
      publish: (plan, revision) => this.#publish(plan, revision),
      releaseSlot: (staged) => this.#releaseSlot(staged),
      deadline: (onReached) =>
        deadlineAt(this.#clock, this.#clock.now() + this.#limits.registration_deadline_ms, onReached),
      now: () => this.#clock.now(),
    };
  }

  /** `session.resources.list`: the first list creates an empty registry with an unpredictable revision. */
  list(sessionId: string): RegistryListing {
    const registry = this.#lifetimes.controlled(sessionId) ?? this.#lifetimes.create(sessionId);
    return { registry_revision: registry.revision, entries: registry.descriptors() };
  }

  /**
   * Admits a `session.resources.register` payload: checks the payload, the capture slot, the name, the
   * expected revision and capacity, in that order, then takes the capture slot. Nothing is read yet.
   */
  beginRegistration(
    sessionId: string,
    payload: unknown,
    registeredBy: RegisteredBy,
    guard: RegistrationGuard,
  ): StagedRegistration {
    const { expected_revision: expectedRevision, resource } = parseRegisterPayload(payload);
    if (this.#budget.captureHeld) throw registryRefusals.captureBusy();
    this.#lifetimes.sweepDue();
    this.#catalog().assertAvailable(resource.name);

    let registry = this.#lifetimes.controlled(sessionId);
    const existing = registry?.named(resource.name);
    assertExpectedRevision(existing, resource.kind, expectedRevision);

    registry ??= this.#lifetimes.create(sessionId);
    if (!existing) this.#assertKindRoom(registry, resource.kind);
    const knownBytes = knownSourceBytes(resource);
    if (registry.bytes - (existing?.chargedBytes ?? 0) + knownBytes > this.#limits.registry_bytes) {
      throw registryRefusals.registryBytes();
    }
    if (resource.kind === 'skill') this.#assertCombinedSkillRoom(registry, resource.name, knownBytes);
    this.#budget.assertEntryRoom();
    const workspace = resource.source.kind === 'workspace_file' ? this.#workspaceOf(sessionId) : null;
    this.#budget.reserveCapture();

    const staged = new StagedRegistration(this.#host, {
      sessionId,
      registry,
      input: resource,
      expectedRevision,
      resourceId: existing?.resourceId ?? null,
      workspace,
      registeredBy,
      guard,
    });
    this.#staged = staged;
    return staged;
  }

  /** `session.resources.unregister`: by resource id and its current revision. */
  unregister(sessionId: string, payload: unknown): UnregisterResult {
    const { resource_id: resourceId, expected_revision: expectedRevision } = parseUnregisterPayload(payload);
    const registry = this.#lifetimes.controlled(sessionId);
    const revision = registry?.withResourceId(resourceId);
    if (!registry || !revision) throw registryRefusals.resourceNotFound();
    if (revision.revisionId !== expectedRevision) throw registryRefusals.staleRevision();
    registry.remove(revision);
    this.#budget.release(revision);
    return {
      resource_id: resourceId,
      removed_revision: revision.revisionId,
      registry_revision: registry.revision,
    };
  }

  /** `session.resources.clear`: an already-empty registry keeps its revision. */
  clear(sessionId: string, payload: unknown): ClearResult {
    const { expected_registry_revision: expected } = parseClearPayload(payload);
    const registry = this.#lifetimes.controlled(sessionId);
    if (!registry || registry.revision !== expected) throw registryRefusals.staleRegistryRevision();
    const removed = registry.clear();
    for (const revision of removed) this.#budget.release(revision);
    return { registry_revision: registry.revision, removed_count: removed.length };
  }

  /** The session has a (new) controller: a claim or a takeover. Staging of the previous authority is dropped. */
  controlStarted(sessionId: string): void {
    this.#discardStagingOf(sessionId);
    this.#lifetimes.claimed(sessionId, true);
  }

  /** The session has no controller any more (release, close, disconnect). */
  controlEnded(sessionId: string): void {
    this.#discardStagingOf(sessionId);
    this.#lifetimes.claimed(sessionId, false);
  }

  /**
   * Keeps the session's registry from expiring while a turn prepares or accepted work runs through worker
   * cleanup. Returns the release, which is harmless to call twice; the idle timer starts when the last
   * protection of an unclaimed registry is released.
   */
  protect(sessionId: string): () => void {
    return this.#lifetimes.protect(sessionId);
  }

  /**
   * Pins the complete current registry content for a turn, or returns null when the session has no
   * registry. The pin keeps every revision and the combined instructions charged until released, whatever
   * happens to the registry. Pins of the same registry revision share one snapshot. Refuses with `conflict`
   * when a registered name has become reserved in the loaded catalog, and with `limit_exceeded` when a new
   * snapshot would not fit.
   */
  snapshot(sessionId: string): SnapshotPin | null {
    const registry = this.#lifetimes.live(sessionId);
    if (!registry) return null;
    const catalog = this.#catalog();
    for (const revision of registry.revisions()) catalog.assertAvailable(revision.name);
    if (registry.shared?.pinned) return registry.shared.pin();

    const snapshot = buildRegistrySnapshot(sessionId, registry.revision, registry.revisions());
    this.#lifetimes.sweepDue();
    this.#budget.assertSnapshotRoom(snapshot.instruction_bytes);
    for (const revision of snapshot.resources) this.#budget.retain(revision);
    this.#budget.addSnapshot(snapshot.instruction_bytes);
    const shared = new SharedSnapshot(snapshot, () => {
      for (const revision of snapshot.resources) this.#budget.release(revision);
      this.#budget.removeSnapshot(snapshot.instruction_bytes);
      if (registry.shared === shared) registry.shared = null;
    });
    registry.shared = shared;
    return shared.pin();
  }

  /** How many resources the session's live registry holds; 0 without one. Never creates a registry. */
  entryCount(sessionId: string): number {
    return this.#lifetimes.live(sessionId)?.size ?? 0;
  }

  /** Whether the session has a live registry. */
  has(sessionId: string): boolean {
    return this.#lifetimes.live(sessionId) !== undefined;
  }

  stats(): RegistryStats {
    let claimed = 0;
    let idle = 0;
    let resources = 0;
    for (const registry of this.#lifetimes.all()) {
      if (registry.claimed) claimed++;
      if (registry.idle) idle++;
      resources += registry.size;
    }
    return {
      registries: this.#lifetimes.size,
      claimed_registries: claimed,
      idle_registries: idle,
      protected_sessions: this.#lifetimes.protectedSessions,
      registered_resources: resources,
      ...this.#budget.figures(),
    };
  }

  /**
   * For daemon shutdown: stops every idle timer and answers a staged registration with `shutting_down`.
   * Pins keep working; nothing expires any more.
   */
  close(): void {
    this.#lifetimes.stopTimers();
    this.#staged?.discard(registryRefusals.shuttingDown());
  }

  async #capture(plan: RegistrationPlan): Promise<ResourceRevision> {
    const { input } = plan;
    const resourceId = plan.resourceId ?? newId('res');
    const { registeredBy } = plan;
    if (input.source.kind === 'inline') {
      const { content: text } = input.source;
      return ResourceRevision.capture({ resourceId, input, captured: Buffer.from(text), text, registeredBy });
    }
    const { kind, name, description } = input;
    if (plan.workspace === null) throw new WireError('internal_error');
    const read = await this.#reader.read({
      workspace: plan.workspace,
      path: input.source.path,
      maxBytes: sourceMaxBytes(kind),
      excludedDirectories: this.#excludedDirectories,
      resource: { kind, name, description },
    });
    // The content rules run while the reader finishes its checks; a refusal of the capture comes first.
    let content: CapturedContent | undefined;
    let contentRefusal: unknown = null;
    try {
      content = validateCapturedSource(kind, read.bytes, read.text);
    } catch (error) {
      contentRefusal = error;
    }
    const hashes = await read.confirmed;
    if (content === undefined) throw contentRefusal;
    return ResourceRevision.capture({
      resourceId,
      input,
      captured: read.bytes,
      content,
      hashes,
      registeredBy,
    });
  }

  #publish(plan: RegistrationPlan, revision: ResourceRevision): RegisterResult {
    if (!plan.guard()) throw registryRefusals.authorityEnded();
    const registry = this.#lifetimes.live(plan.sessionId);
    if (registry !== plan.registry) throw registryRefusals.registryGone();
    const existing = registry.named(revision.name);
    assertExpectedRevision(existing, revision.kind, plan.expectedRevision);
    this.#catalog().assertAvailable(revision.name);

    if (!existing) this.#assertKindRoom(registry, revision.kind);
    this.#lifetimes.sweepDue();
    if (
      registry.bytes - (existing?.chargedBytes ?? 0) + revision.chargedBytes >
      this.#limits.registry_bytes
    ) {
      throw registryRefusals.registryBytes();
    }
    if (revision.kind === 'skill') {
      this.#assertCombinedSkillRoom(registry, revision.name, revision.instructionBytes);
    }
    this.#budget.assertRevisionRoom(revision);

    registry.put(revision);
    this.#budget.retain(revision);
    if (existing) this.#budget.release(existing);
    return { entry: revision.descriptor, registry_revision: registry.revision };
  }

  #releaseSlot(staged: StagedRegistration): void {
    if (this.#staged !== staged) return;
    this.#staged = null;
    this.#budget.releaseCapture();
  }

  #discardStagingOf(sessionId: string): void {
    if (this.#staged?.sessionId === sessionId) this.#staged.discard();
  }

  #assertKindRoom(registry: SessionRegistry, kind: ResourceKind): void {
    if (kind === 'tool' && registry.count('tool') + 1 > this.#limits.tools_per_session) {
      throw registryRefusals.tooManyTools();
    }
    if (kind === 'skill' && registry.count('skill') + 1 > this.#limits.skills_per_session) {
      throw registryRefusals.tooManySkills();
    }
  }

  #assertCombinedSkillRoom(registry: SessionRegistry, name: string, instructionBytes: number): void {
    if (registry.combinedSkillBytesWith(name, instructionBytes) > this.#limits.combined_skill_bytes) {
      throw registryRefusals.combinedSkillBytes();
    }
  }
}

/** Creation needs a free name; replacement needs the current revision of the same kind and name. */
function assertExpectedRevision(
  existing: ResourceRevision | undefined,
  kind: ResourceKind,
  expectedRevision: string | null,
): void {
  if (existing && existing.kind !== kind) throw registryRefusals.kindCollision();
  if (expectedRevision === null) {
    if (existing) throw registryRefusals.nameExists();
  } else if (existing?.revisionId !== expectedRevision) {
    throw registryRefusals.staleRevision();
  }
}

/** Source bytes known before capture: an inline text's length; a workspace file's is known only once read. */
function knownSourceBytes(resource: ResourceInput): number {
  return resource.source.kind === 'inline' ? utf8ByteLength(resource.source.content) : 0;
}
