import fc from 'fast-check';
import t from 'tap';
import { type ErrorCode, isWireError } from '../../../core/errors.js';
import { SERVICE_LIMITS } from '../../../core/limits.js';
import type { RegistryLimits } from '../../../core/registry/registry-limits.js';
import type { SnapshotPin } from '../../../core/registry/registry-snapshot.js';
import { ResourceRegistry } from '../../../core/registry/resource-registry.js';
import type { RegisteredBy, ResourceDescriptor } from '../../../core/registry/resource-revision.js';
import type { StagedRegistration } from '../../../core/registry/staged-registration.js';
import { NameCatalog } from '../../../core/resources/names.js';
import { pinnedWorkspace } from '../../helpers/confined.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';
import { toolContractWithTimeout, unusedReader } from './registry-fixture.js';

/**
 * A model of the registry's lifetime and accounting, written from the accounting formula and the spec's
 * rules, run step by step against the real registry over random sequences of registrations (created,
 * replaced, stale, staged across other commands), unregistrations, clears, claims, protections, snapshot
 * pins and releases, and time. After every step the counts and bytes must equal the model's exactly, and
 * every refusal must carry the model's code: saturation is `limit_exceeded` and evicts nothing.
 *
 * The bounds are small so that each one saturates within a short sequence.
 */
const COUNT_BOUND: RegistryLimits = {
  tools_per_session: 2,
  skills_per_session: 2,
  registry_bytes: 3_000,
  combined_skill_bytes: 1_000,
  retained_snapshots: 2,
  retained_entries: 4,
  retained_bytes: 7_000,
  registry_sessions: 2,
  registry_idle_timeout_ms: 900_000,
  capture_reservation_bytes: 600,
  registration_deadline_ms: SERVICE_LIMITS.registration_deadline_ms,
};

/** The same, with the per-session kind counts binding first. */
const KIND_BOUND: RegistryLimits = {
  ...COUNT_BOUND,
  tools_per_session: 1,
  skills_per_session: 1,
  retained_entries: 8,
};

/** The same, with the daemon byte budget binding before the counts do. */
const BYTE_BOUND: RegistryLimits = {
  ...COUNT_BOUND,
  retained_entries: 8,
  retained_snapshots: 4,
  retained_bytes: 4_000,
};

const SESSIONS = ['s0', 's1', 's2'] as const;
const NAMES = ['a', 'b', 'c', 'read_file'] as const;
const SKILL_SIZES = [1, 40, 400, 900] as const;
const TOOL_TIMEOUTS = [1_000, 120_000] as const;
const ADVANCES = [1, 450_000, 899_999, 900_000] as const;
const ATTRIBUTION: RegisteredBy = {
  instance_id: 'ins_model',
  connection_id: 'con_model',
  operation_id: 'op_model',
  grant_generation: 1,
};
const DESCRIPTION = 'd';

type Kind = 'tool' | 'skill';
type Session = (typeof SESSIONS)[number];

// ---------------------------------------------------------------------------------------------------------
// The model

interface ModelRevision {
  resourceId: string;
  revisionId: string;
  kind: Kind;
  charge: number;
  instructionBytes: number;
  /** Holders: its registry (while current there) and each live snapshot containing it. */
  refs: number;
}

interface ModelRegistry {
  /** Distinguishes a recreated registry from the one that expired. */
  identity: number;
  /** Bumped on every change, so pins of one version share a snapshot. */
  version: number;
  /** The registry revision as last observed from a result; null while unobserved. */
  revision: string | null;
  claimed: boolean;
  idleAt: number | null;
  entries: Map<string, ModelRevision>;
  /** Revision ids it has held and superseded, for stale requests. */
  retired: string[];
}

interface ModelSnapshot {
  key: string;
  revisions: ModelRevision[];
  instructionBytes: number;
  pins: number;
}

interface ModelPin {
  snapshot: ModelSnapshot | null;
  released: boolean;
}

interface ModelStaged {
  session: Session;
  registry: ModelRegistry;
  request: RegisterRequest;
  expected: string | null;
  live: boolean;
  /** When the registration deadline discards it. */
  deadlineAt: number;
}

interface Model {
  limits: RegistryLimits;
  now: number;
  identities: number;
  registries: Map<Session, ModelRegistry>;
  protections: Map<Session, number>;
  snapshots: ModelSnapshot[];
  pins: ModelPin[];
  protectionsTaken: Array<{ session: Session; released: boolean }>;
  staged: ModelStaged | null;
}

function newModel(limits: RegistryLimits): Model {
  return {
    limits,
    now: 0,
    identities: 0,
    registries: new Map(),
    protections: new Map(),
    snapshots: [],
    pins: [],
    protectionsTaken: [],
    staged: null,
  };
}

function liveRevisions(model: Model): Set<ModelRevision> {
  const live = new Set<ModelRevision>();
  for (const registry of model.registries.values())
    for (const revision of registry.entries.values()) live.add(revision);
  for (const snapshot of model.snapshots) for (const revision of snapshot.revisions) live.add(revision);
  return live;
}

function retainedBytes(model: Model): number {
  let bytes = 0;
  for (const revision of liveRevisions(model)) bytes += revision.charge;
  for (const snapshot of model.snapshots) bytes += snapshot.instructionBytes;
  if (model.staged?.live) bytes += model.limits.capture_reservation_bytes;
  return bytes;
}

/** Which bounds the random sequences saturated, by the model's reckoning. */
const saturatedBounds = new Set<string>();

function saturated(bound: string): ErrorCode {
  saturatedBounds.add(bound);
  return 'limit_exceeded';
}

function combined(sizes: number[]): number {
  return sizes.length === 0 ? 0 : sizes.reduce((sum, size) => sum + size, 0) + sizes.length - 1;
}

function registryBytes(registry: ModelRegistry): number {
  let bytes = 0;
  for (const revision of registry.entries.values()) bytes += revision.charge;
  return bytes;
}

function settle(model: Model, session: Session, registry: ModelRegistry): void {
  if (!registry.claimed && registry.entries.size === 0) {
    model.registries.delete(session);
    return;
  }
  if (registry.claimed || model.protections.has(session)) {
    registry.idleAt = null;
    return;
  }
  registry.idleAt ??= model.now + model.limits.registry_idle_timeout_ms;
}

function expireDue(model: Model): void {
  for (const [session, registry] of model.registries) {
    if (registry.idleAt !== null && model.now >= registry.idleAt) model.registries.delete(session);
  }
}

/** What a controller request does to an existing registry: it proves the session is claimed. */
function controlled(model: Model, session: Session): ModelRegistry | undefined {
  const registry = model.registries.get(session);
  if (registry && !registry.claimed) {
    registry.claimed = true;
    settle(model, session, registry);
  }
  return registry;
}

function createRegistry(model: Model, session: Session): ModelRegistry | ErrorCode {
  if (model.registries.size + 1 > model.limits.registry_sessions) return saturated('registry_sessions');
  const registry: ModelRegistry = {
    identity: ++model.identities,
    version: 0,
    revision: null,
    claimed: true,
    idleAt: null,
    entries: new Map(),
    retired: [],
  };
  model.registries.set(session, registry);
  return registry;
}

function changed(registry: ModelRegistry, revision: string | null): void {
  registry.version += 1;
  registry.revision = revision;
}

/** The charge of a revision, from the formula: exact bytes, normalized bytes (equal here) and descriptor. */
function predictedCharge(kind: Kind, name: string, capturedBytes: number): number {
  const descriptor = {
    resource_id: `res_${'A'.repeat(22)}`,
    revision_id: `rev_${'A'.repeat(22)}`,
    kind,
    name,
    description: DESCRIPTION,
    content_sha256: '0'.repeat(64),
    revision_sha256: '0'.repeat(64),
    captured_bytes: capturedBytes,
    registered_by: ATTRIBUTION,
  };
  return capturedBytes * 2 + Buffer.byteLength(JSON.stringify(descriptor));
}

// ---------------------------------------------------------------------------------------------------------
// Commands

type ExpectedPick = 'none' | 'current' | 'stale';

interface RegisterRequest {
  session: Session;
  kind: Kind;
  name: string;
  variant: number;
  expected: ExpectedPick;
}

type Command =
  | { op: 'list'; session: Session }
  | { op: 'register'; request: RegisterRequest }
  | { op: 'begin'; request: RegisterRequest }
  /** Stages a replacement of an existing resource, picked among the session's entries. */
  | { op: 'beginReplace'; session: Session; pick: number; variant: number }
  | { op: 'publish' }
  | { op: 'discard' }
  | { op: 'unregister'; session: Session; pick: number; revision: 'current' | 'stale' | 'absent' }
  | { op: 'clear'; session: Session; revision: 'current' | 'stale' }
  /** Unregisters or clears under a staged registration, at the current revision. */
  | { op: 'interfere'; with: 'unregister' | 'clear' }
  | { op: 'claim'; session: Session }
  | { op: 'unclaim'; session: Session }
  | { op: 'protect'; session: Session }
  | { op: 'unprotect'; index: number }
  | { op: 'pin'; session: Session }
  | { op: 'unpin'; index: number }
  | { op: 'advance'; ms: number };

function content(kind: Kind, variant: number): string {
  return kind === 'skill'
    ? 'k'.repeat(SKILL_SIZES[variant % SKILL_SIZES.length]!)
    : toolContractWithTimeout(TOOL_TIMEOUTS[variant % TOOL_TIMEOUTS.length]!);
}

function expectedRevision(model: Model, request: RegisterRequest): string | null {
  const registry = model.registries.get(request.session);
  switch (request.expected) {
    case 'none':
      return null;
    case 'current':
      return registry?.entries.get(request.name)?.revisionId ?? 'rev_never_issued';
    case 'stale':
      return registry?.retired.at(-1) ?? 'rev_never_issued';
  }
}

/** Admission as the model sees it; returns the refusal or the registry to publish into. */
function admit(model: Model, request: RegisterRequest, expected: string | null): ModelRegistry | ErrorCode {
  if (model.staged?.live) return 'configuration_busy';
  if (request.name === 'read_file') return 'conflict';
  let registry = controlled(model, request.session);
  const refusal = revisionRefusal(registry, request, expected);
  if (refusal) return refusal;
  if (!registry) {
    const created = createRegistry(model, request.session);
    if (typeof created === 'string') return created;
    registry = created;
  }
  const existing = registry.entries.get(request.name);
  const known = Buffer.byteLength(content(request.kind, request.variant));
  const kindCount = [...registry.entries.values()].filter((entry) => entry.kind === request.kind).length;
  const kindLimit =
    request.kind === 'tool' ? model.limits.tools_per_session : model.limits.skills_per_session;
  if (!existing && kindCount + 1 > kindLimit) return saturated('admission:kind_count');
  if (registryBytes(registry) - (existing?.charge ?? 0) + known > model.limits.registry_bytes)
    return saturated('admission:registry_bytes');
  if (
    request.kind === 'skill' &&
    combinedSkillsWith(registry, request.name, known) > model.limits.combined_skill_bytes
  ) {
    return saturated('admission:combined_skill_bytes');
  }
  if (liveRevisions(model).size + 1 > model.limits.retained_entries)
    return saturated('admission:retained_entries');
  if (retainedBytes(model) + model.limits.capture_reservation_bytes > model.limits.retained_bytes)
    return saturated('admission:reservation');
  return registry;
}

function revisionRefusal(
  registry: ModelRegistry | undefined,
  request: RegisterRequest,
  expected: string | null,
): ErrorCode | null {
  const existing = registry?.entries.get(request.name);
  if (existing && existing.kind !== request.kind) return 'conflict';
  if (expected === null) return existing ? 'conflict' : null;
  return existing?.revisionId === expected ? null : 'conflict';
}

function combinedSkillsWith(registry: ModelRegistry, name: string, bytes: number): number {
  const sizes = [...registry.entries]
    .filter(([entryName, entry]) => entry.kind === 'skill' && entryName !== name)
    .map(([, entry]) => entry.instructionBytes);
  return combined([...sizes, bytes]);
}

/** Publication as the model sees it: the rechecks, then the refusal or the charge to commit. */
function publication(model: Model, staged: ModelStaged): ErrorCode | number {
  const { request } = staged;
  const registry = model.registries.get(request.session);
  if (registry !== staged.registry) return 'conflict';
  const refusal = revisionRefusal(registry, request, staged.expected);
  if (refusal) return refusal;
  const existing = registry.entries.get(request.name);
  const captured = Buffer.byteLength(content(request.kind, request.variant));
  const charge = predictedCharge(request.kind, request.name, captured);
  const kindCount = [...registry.entries.values()].filter((entry) => entry.kind === request.kind).length;
  const kindLimit =
    request.kind === 'tool' ? model.limits.tools_per_session : model.limits.skills_per_session;
  if (!existing && kindCount + 1 > kindLimit) return saturated('publication:kind_count');
  if (registryBytes(registry) - (existing?.charge ?? 0) + charge > model.limits.registry_bytes)
    return saturated('publication:registry_bytes');
  if (
    request.kind === 'skill' &&
    combinedSkillsWith(registry, request.name, captured) > model.limits.combined_skill_bytes
  ) {
    return saturated('publication:combined_skill_bytes');
  }
  if (liveRevisions(model).size + 1 > model.limits.retained_entries)
    return saturated('publication:retained_entries');
  const withoutSlot = retainedBytes(model) - model.limits.capture_reservation_bytes;
  if (withoutSlot + charge > model.limits.retained_bytes) return saturated('publication:retained_bytes');
  return charge;
}

function commit(staged: ModelStaged, charge: number, entry: ResourceDescriptor, registryRevision: string) {
  const registry = staged.registry;
  const existing = registry.entries.get(entry.name);
  if (existing) {
    registry.retired.push(existing.revisionId);
    existing.refs -= 1;
  }
  registry.entries.set(entry.name, {
    resourceId: entry.resource_id,
    revisionId: entry.revision_id,
    kind: entry.kind,
    charge,
    instructionBytes: entry.kind === 'skill' ? entry.captured_bytes : 0,
    refs: 1,
  });
  changed(registry, registryRevision);
}

// ---------------------------------------------------------------------------------------------------------
// The run

interface Real {
  registry: ResourceRegistry;
  clock: FakeClock;
  staged: StagedRegistration | null;
  pins: Array<SnapshotPin | null>;
  releases: Array<() => void>;
}

function outcome<T>(fn: () => T): { ok: true; value: T } | { ok: false; code: ErrorCode } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    if (isWireError(error)) return { ok: false, code: error.code };
    throw error;
  }
}

function payloadOf(request: RegisterRequest, expected: string | null) {
  return {
    expected_revision: expected,
    resource: {
      kind: request.kind,
      name: request.name,
      description: DESCRIPTION,
      source: { kind: 'inline', content: content(request.kind, request.variant) },
    },
  };
}

function fail(message: string): never {
  throw new Error(message);
}

function expectCode(label: string, actual: { ok: boolean; code?: ErrorCode }, expected: ErrorCode | null) {
  const got = actual.ok ? null : (actual.code ?? null);
  reached.add(`${label}:${got ?? 'success'}`);
  if (got !== expected) fail(`${label}: expected ${expected ?? 'success'}, got ${got ?? 'success'}`);
}

async function step(model: Model, real: Real, command: Command): Promise<void> {
  switch (command.op) {
    case 'list': {
      const registry = controlled(model, command.session);
      const expectedRefusal = registry ? null : createRegistry(model, command.session);
      const result = outcome(() => real.registry.list(command.session));
      expectCode('list', result, typeof expectedRefusal === 'string' ? expectedRefusal : null);
      if (!result.ok) return;
      const current = model.registries.get(command.session) ?? fail('list: no model registry');
      if (current.revision !== null && current.revision !== result.value.registry_revision) {
        fail('list: the registry revision changed without a change');
      }
      current.revision = result.value.registry_revision;
      const listed = result.value.entries.map((entry) => `${entry.kind}:${entry.name}:${entry.revision_id}`);
      const modelled = [...current.entries]
        .sort(([a, x], [b, y]) => (x.kind === y.kind ? (a < b ? -1 : 1) : x.kind < y.kind ? -1 : 1))
        .map(([name, entry]) => `${entry.kind}:${name}:${entry.revisionId}`);
      if (JSON.stringify(listed) !== JSON.stringify(modelled)) fail(`list: ${listed} vs ${modelled}`);
      return;
    }
    case 'register':
    case 'begin': {
      const { request } = command;
      const expected = expectedRevision(model, request);
      const admitted = admit(model, request, expected);
      const begun = outcome(() =>
        real.registry.beginRegistration(
          request.session,
          payloadOf(request, expected),
          ATTRIBUTION,
          () => true,
        ),
      );
      expectCode(`${command.op} admission`, begun, typeof admitted === 'string' ? admitted : null);
      if (!begun.ok || typeof admitted === 'string') return;
      real.staged = begun.value;
      model.staged = {
        session: request.session,
        registry: admitted,
        request,
        expected,
        live: true,
        deadlineAt: model.now + model.limits.registration_deadline_ms,
      };
      await real.staged.capture();
      if (command.op === 'register') publish(model, real);
      return;
    }
    case 'beginReplace': {
      const entries = [...(model.registries.get(command.session)?.entries ?? [])];
      const picked = entries[command.pick % Math.max(entries.length, 1)];
      if (!picked) return;
      const [name, entry] = picked;
      const request: RegisterRequest = {
        session: command.session,
        kind: entry.kind,
        name,
        variant: command.variant,
        expected: 'current',
      };
      await step(model, real, { op: 'begin', request });
      return;
    }
    case 'publish':
      if (real.staged && model.staged) publish(model, real);
      return;
    case 'discard':
      real.staged?.discard();
      real.staged = null;
      model.staged = null;
      return;
    case 'unregister': {
      // Pick -1 aims at the resource a staged registration replaces.
      const sessionId = command.pick < 0 && model.staged ? model.staged.session : command.session;
      const registry = controlled(model, sessionId);
      const entries = [...(registry?.entries.values() ?? [])];
      const stagedTarget = model.staged ? registry?.entries.get(model.staged.request.name) : undefined;
      const target =
        command.pick < 0
          ? stagedTarget
          : entries.length > 0
            ? entries[command.pick % entries.length]
            : undefined;
      const resourceId = command.revision === 'absent' || !target ? 'res_absent' : target.resourceId;
      const revisionId =
        command.revision === 'current'
          ? (target?.revisionId ?? 'rev_x')
          : (registry?.retired.at(-1) ?? 'rev_x');
      const expectedRefusal: ErrorCode | null =
        !registry || !target || command.revision === 'absent'
          ? 'resource_not_found'
          : target.revisionId !== revisionId
            ? 'conflict'
            : null;
      const result = outcome(() =>
        real.registry.unregister(sessionId, { resource_id: resourceId, expected_revision: revisionId }),
      );
      expectCode('unregister', result, expectedRefusal);
      if (!result.ok || !registry || !target) return;
      const name =
        [...registry.entries].find(([, entry]) => entry === target)?.[0] ?? fail('unregister: name');
      registry.entries.delete(name);
      registry.retired.push(target.revisionId);
      target.refs -= 1;
      changed(registry, result.value.registry_revision);
      return;
    }
    case 'clear': {
      const registry = controlled(model, command.session);
      const sent = command.revision === 'current' ? (registry?.revision ?? 'reg_unobserved') : 'reg_stale';
      const expectedRefusal: ErrorCode | null = !registry || registry.revision !== sent ? 'conflict' : null;
      const result = outcome(() =>
        real.registry.clear(command.session, { expected_registry_revision: sent }),
      );
      expectCode('clear', result, expectedRefusal);
      if (!result.ok || !registry) return;
      if (result.value.removed_count !== registry.entries.size) fail('clear: removed count');
      if (registry.entries.size === 0) {
        if (result.value.registry_revision !== sent) fail('clear: an empty clear changed the revision');
        return;
      }
      for (const entry of registry.entries.values()) {
        registry.retired.push(entry.revisionId);
        entry.refs -= 1;
      }
      registry.entries.clear();
      changed(registry, result.value.registry_revision);
      return;
    }
    case 'interfere': {
      const staged = model.staged;
      if (!staged) return;
      step(
        model,
        real,
        command.with === 'unregister'
          ? { op: 'unregister', session: staged.session, pick: -1, revision: 'current' }
          : { op: 'clear', session: staged.session, revision: 'current' },
      );
      return;
    }
    case 'claim':
    case 'unclaim': {
      if (model.staged?.session === command.session) {
        model.staged.live = false;
      }
      const registry = model.registries.get(command.session);
      if (registry) {
        registry.claimed = command.op === 'claim';
        settle(model, command.session, registry);
      }
      if (command.op === 'claim') real.registry.controlStarted(command.session);
      else real.registry.controlEnded(command.session);
      if (model.staged && !model.staged.live) {
        if (real.staged?.state !== 'discarded') fail('control change: the staged capture was not discarded');
        model.staged = null;
        real.staged = null;
      }
      return;
    }
    case 'protect': {
      model.protections.set(command.session, (model.protections.get(command.session) ?? 0) + 1);
      const registry = model.registries.get(command.session);
      if (registry) settle(model, command.session, registry);
      model.protectionsTaken.push({ session: command.session, released: false });
      real.releases.push(real.registry.protect(command.session));
      return;
    }
    case 'unprotect': {
      if (model.protectionsTaken.length === 0) return;
      const index = command.index % model.protectionsTaken.length;
      const taken = model.protectionsTaken[index]!;
      if (!taken.released) {
        taken.released = true;
        const remaining = (model.protections.get(taken.session) ?? 1) - 1;
        if (remaining === 0) model.protections.delete(taken.session);
        else model.protections.set(taken.session, remaining);
        const registry = model.registries.get(taken.session);
        if (registry) settle(model, taken.session, registry);
      }
      real.releases[index]?.();
      return;
    }
    case 'pin': {
      const registry = model.registries.get(command.session);
      const result = outcome(() => real.registry.snapshot(command.session));
      if (!registry) {
        if (!result.ok || result.value !== null) fail('pin: expected no snapshot');
        model.pins.push({ snapshot: null, released: true });
        real.pins.push(null);
        return;
      }
      const key = `${registry.identity}:${registry.version}`;
      let snapshot = model.snapshots.find((candidate) => candidate.key === key);
      let expectedRefusal: ErrorCode | null = null;
      if (!snapshot) {
        const revisions = [...registry.entries.values()];
        const instructionBytes = combined(
          revisions.filter((entry) => entry.kind === 'skill').map((entry) => entry.instructionBytes),
        );
        if (model.snapshots.length + 1 > model.limits.retained_snapshots)
          expectedRefusal = saturated('pin:retained_snapshots');
        else if (retainedBytes(model) + instructionBytes > model.limits.retained_bytes)
          expectedRefusal = saturated('pin:retained_bytes');
        else {
          snapshot = { key, revisions, instructionBytes, pins: 0 };
          for (const revision of revisions) revision.refs += 1;
          model.snapshots.push(snapshot);
        }
      }
      expectCode('pin', result, expectedRefusal);
      if (!result.ok || !snapshot) return;
      snapshot.pins += 1;
      if (result.value?.snapshot.resources.length !== snapshot.revisions.length) fail('pin: snapshot size');
      model.pins.push({ snapshot, released: false });
      real.pins.push(result.value);
      return;
    }
    case 'unpin': {
      if (model.pins.length === 0) return;
      const index = command.index % model.pins.length;
      const pin = model.pins[index]!;
      if (!pin.released && pin.snapshot) {
        pin.released = true;
        const snapshot = pin.snapshot;
        snapshot.pins -= 1;
        if (snapshot.pins === 0) {
          for (const revision of snapshot.revisions) revision.refs -= 1;
          model.snapshots.splice(model.snapshots.indexOf(snapshot), 1);
        }
      }
      real.pins[index]?.release();
      return;
    }
    case 'advance':
      model.now += command.ms;
      expireDue(model);
      real.clock.advance(command.ms);
      if (model.staged && model.now >= model.staged.deadlineAt) {
        if (real.staged?.state !== 'discarded') fail('advance: the deadline did not discard the staging');
        model.staged = null;
        real.staged = null;
      }
      return;
  }
}

function publish(model: Model, real: Real): void {
  const staged = model.staged ?? fail('publish: nothing staged');
  const expected = publication(model, staged);
  const result = outcome(() => (real.staged ?? fail('publish: nothing staged')).publish());
  model.staged = null;
  real.staged = null;
  expectCode('publish', result, typeof expected === 'string' ? expected : null);
  if (!result.ok || typeof expected === 'string') return;
  commit(staged, expected, result.value.entry, result.value.registry_revision);
}

function compare(model: Model, real: Real, label: string): void {
  const stats = real.registry.stats();
  const registries = [...model.registries.values()];
  const expected = {
    registries: registries.length,
    claimed_registries: registries.filter((registry) => registry.claimed).length,
    idle_registries: registries.filter((registry) => registry.idleAt !== null).length,
    protected_sessions: model.protections.size,
    registered_resources: registries.reduce((sum, registry) => sum + registry.entries.size, 0),
    retained_entries: liveRevisions(model).size,
    retained_snapshots: model.snapshots.length,
    retained_bytes: retainedBytes(model),
    capture_slot_busy: model.staged?.live === true,
  };
  if (JSON.stringify(stats) !== JSON.stringify(expected)) {
    fail(`${label}: stats ${JSON.stringify(stats)} != model ${JSON.stringify(expected)}`);
  }
  for (const revision of liveRevisions(model))
    if (revision.refs < 1) fail(`${label}: a live revision without holders`);
  if (
    stats.retained_bytes > model.limits.retained_bytes ||
    stats.retained_entries > model.limits.retained_entries
  ) {
    fail(`${label}: a bound was exceeded`);
  }
  for (const session of SESSIONS) {
    if (real.registry.has(session) !== model.registries.has(session)) fail(`${label}: has(${session})`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Arbitraries

const session = fc.constantFrom(...SESSIONS);
const request = fc.record({
  session,
  kind: fc.constantFrom<Kind>('tool', 'skill'),
  name: fc.constantFrom(...NAMES),
  variant: fc.nat({ max: 7 }),
  expected: fc.constantFrom<ExpectedPick>('none', 'none', 'current', 'current', 'stale'),
});

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: session.map((s) => ({ op: 'list' as const, session: s })), weight: 2 },
  { arbitrary: request.map((r) => ({ op: 'register' as const, request: r })), weight: 8 },
  {
    arbitrary: fc
      .tuple(session, fc.nat({ max: 5 }), fc.nat({ max: 7 }))
      .map(([s, pick, variant]) => ({ op: 'beginReplace' as const, session: s, pick, variant })),
    weight: 1,
  },
  { arbitrary: request.map((r) => ({ op: 'begin' as const, request: r })), weight: 1 },
  {
    arbitrary: fc
      .constantFrom('unregister' as const, 'clear' as const)
      .map((w) => ({ op: 'interfere' as const, with: w })),
    weight: 3,
  },
  { arbitrary: fc.constant({ op: 'publish' as const }), weight: 2 },
  { arbitrary: fc.constant({ op: 'discard' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('unregister' as const),
      session,
      pick: fc.nat({ max: 5 }),
      revision: fc.constantFrom<'current' | 'stale' | 'absent'>('current', 'current', 'stale', 'absent'),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('clear' as const),
      session,
      revision: fc.constantFrom<'current' | 'stale'>('current', 'current', 'stale'),
    }),
    weight: 1,
  },
  { arbitrary: session.map((s) => ({ op: 'claim' as const, session: s })), weight: 2 },
  { arbitrary: session.map((s) => ({ op: 'unclaim' as const, session: s })), weight: 2 },
  { arbitrary: session.map((s) => ({ op: 'protect' as const, session: s })), weight: 1 },
  { arbitrary: fc.nat({ max: 9 }).map((index) => ({ op: 'unprotect' as const, index })), weight: 1 },
  { arbitrary: session.map((s) => ({ op: 'pin' as const, session: s })), weight: 3 },
  { arbitrary: fc.nat({ max: 9 }).map((index) => ({ op: 'unpin' as const, index })), weight: 3 },
  { arbitrary: fc.constantFrom(...ADVANCES).map((ms) => ({ op: 'advance' as const, ms })), weight: 2 },
);

/** Which outcomes the random sequences reached, so a model that never saturates cannot pass unnoticed. */
const reached = new Set<string>();

async function run(commands: Command[], limits: RegistryLimits): Promise<void> {
  const clock = fakeClock();
  const registry = new ResourceRegistry({
    clock,
    catalog: () => new NameCatalog(),
    workspaceOf: () => pinnedWorkspace('/nonexistent'),
    excludedDirectories: [],
    reader: unusedReader,
    limits,
  });
  const model = newModel(limits);
  const real: Real = { registry, clock, staged: null, pins: [], releases: [] };
  try {
    for (const [index, command] of commands.entries()) {
      const label = `step ${index} ${JSON.stringify(command)}`;
      try {
        await step(model, real, command);
      } catch (error) {
        throw new Error(`${label}: ${error instanceof Error ? error.message : String(error)}`);
      }
      compare(model, real, label);
    }
  } finally {
    registry.close();
  }
}

t.test('counts and bytes equal the model after every step of random sequences', async (t) => {
  for (const limits of [COUNT_BOUND, KIND_BOUND, BYTE_BOUND]) {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { minLength: 1, maxLength: 80, size: 'max' }), (commands) =>
        run(commands, limits),
      ),
      { numRuns: 600 },
    );
  }
  for (const outcome of [
    'register admission:success',
    'publish:success',
    'register admission:limit_exceeded',
    'publish:limit_exceeded',
    'register admission:configuration_busy',
    'register admission:conflict',
    'publish:conflict',
    'pin:success',
    'pin:limit_exceeded',
    'list:limit_exceeded',
    'unregister:success',
    'unregister:conflict',
    'unregister:resource_not_found',
    'clear:success',
    'clear:conflict',
  ]) {
    t.ok(reached.has(outcome), outcome);
  }
  for (const bound of [
    'registry_sessions',
    'admission:kind_count',
    'admission:registry_bytes',
    'admission:combined_skill_bytes',
    'admission:retained_entries',
    'admission:reservation',
    'publication:registry_bytes',
    'publication:retained_bytes',
    'pin:retained_snapshots',
    'pin:retained_bytes',
  ]) {
    t.ok(saturatedBounds.has(bound), `saturated ${bound}`);
  }
});
