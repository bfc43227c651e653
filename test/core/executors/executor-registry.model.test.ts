import fc from 'fast-check';
import t from 'tap';
import { isWireError } from '../../../core/errors.js';
import type { ExecutorRegistry, ExecutorView } from '../../../core/executors/executor-registry.js';
import { projectExecutorResultForLookup } from '../../../core/executors/lookup-projection.js';
import type { FakeClock } from '../../helpers/fake-clock.js';
import { registryFixture } from './executor-fixture.js';

/**
 * A model of executor authority written straight from the spec's rules, run step by step against the
 * registry. Every command compares the registry's outcome with the model's, and after every step the
 * visible state (which connection holds which generation, what is pending, what still exists) must
 * agree, so each proof is accepted exactly when the spec allows it.
 */

const CONFIRM_MS = 60_000;
const ROTATION_MS = 60_000;
const IDLE_MS = 900_000;
const SLOTS = 3;

interface ModelExecutor {
  id: string;
  generation: number;
  proof: string;
  candidate: { secret: string; deadline: number } | null;
  confirmed: boolean;
  holder: string | null;
  pins: number;
  confirmDeadline: number;
  idleDeadline: number | null;
  gone: boolean;
  issued: string[];
}

interface Model {
  now: number;
  executors: ModelExecutor[];
  connections: string[];
  opened: number;
  secrets: string[];
}

interface Real {
  registry: ExecutorRegistry;
  clock: FakeClock;
}

type SecretPick = 'proof' | 'candidate' | 'retired' | 'foreign' | 'garbage';

const observed = new Set<string>();

function applyDeadlines(model: Model): void {
  for (const e of model.executors) {
    if (e.gone) continue;
    if (!e.confirmed && model.now >= e.confirmDeadline) e.gone = true;
    if (e.confirmed && e.idleDeadline !== null && model.now >= e.idleDeadline) e.gone = true;
    if (e.candidate && (e.gone || model.now >= e.candidate.deadline)) e.candidate = null;
  }
}

function live(model: Model): ModelExecutor[] {
  return model.executors.filter((e) => !e.gone);
}

function heldBy(model: Model, connection: string): ModelExecutor | undefined {
  return live(model).find((e) => e.holder === connection);
}

/** Index -1 names the newest executor, so sequences keep working on one long enough to rotate it. */
function target(model: Model, index: number): ModelExecutor | undefined {
  const count = model.executors.length;
  if (count === 0) return undefined;
  return model.executors[index < 0 ? count - 1 : index % count];
}

/** Slot -1 is the connection holding the target, so holder-only actions are reached often. */
function connectionFor(model: Model, slot: number, e: ModelExecutor | undefined): string {
  if (slot < 0 && e?.holder) return e.holder;
  return model.connections[Math.max(slot, 0)]!;
}

function pickSecret(model: Model, e: ModelExecutor | undefined, pick: SecretPick): string {
  if (e && pick === 'proof') return e.proof;
  if (e?.candidate && pick === 'candidate') return e.candidate.secret;
  const retired = e?.issued.filter((s) => s !== e.proof && s !== e.candidate?.secret) ?? [];
  if (pick === 'retired' && retired.length > 0) return retired[retired.length - 1] ?? '';
  const foreign = model.secrets.filter((s) => !e?.issued.includes(s));
  if (pick === 'foreign' && foreign.length > 0) return foreign[0] ?? '';
  return 'G'.repeat(43);
}

function startIdle(model: Model, e: ModelExecutor): void {
  if (e.confirmed && e.holder === null && e.pins === 0 && e.idleDeadline === null) {
    e.idleDeadline = model.now + IDLE_MS;
  }
}

function attempt(action: () => unknown): { code: string; value?: unknown; error?: unknown } {
  try {
    return { code: 'ok', value: action() };
  } catch (error) {
    if (!isWireError(error)) throw error;
    return { code: error.code, error };
  }
}

function fail(message: string): never {
  throw new Error(message);
}

function expectOutcome(label: string, actual: string, expected: string): void {
  observed.add(`${label}:${actual}`);
  if (actual !== expected) fail(`${label}: registry answered ${actual}, the spec requires ${expected}`);
}

/** Neither a result (other than the issuing one), nor an error, nor a lookup record carries a secret. */
function expectNoSecret(model: Model, ...values: unknown[]): void {
  const text = values.map((value) => JSON.stringify(value) ?? String(value)).join('\n');
  for (const secret of model.secrets) if (text.includes(secret)) fail('a secret leaked');
}

function expectState(model: Model, real: Real): void {
  const expected: ExecutorView[] = live(model).map((e) => ({
    executor_id: e.id,
    executor_generation: e.generation,
    state: !e.confirmed ? 'provisional' : e.holder === null ? 'detached' : 'attached',
    connection_id: e.holder,
    pins: e.pins,
    rotation_pending: e.candidate !== null,
  }));
  const actual = real.registry.view();
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    fail(`state differs:\n${JSON.stringify(actual)}\n${JSON.stringify(expected)}`);
  }
  expectNoSecret(model, actual, real.registry);
  for (const connection of model.connections) {
    const e = heldBy(model, connection);
    const attached = e?.confirmed ? { executor_id: e.id, executor_generation: e.generation } : null;
    if (JSON.stringify(real.registry.attachedTo(connection)) !== JSON.stringify(attached)) {
      fail(`attachedTo(${connection}) differs`);
    }
  }
  for (const e of model.executors) {
    const current = !e.gone && e.confirmed && e.holder !== null;
    for (const generation of [e.generation - 1, e.generation]) {
      for (const connection of model.connections) {
        const expectedCurrent = current && generation === e.generation && connection === e.holder;
        if (real.registry.isCurrent(e.id, generation, connection) !== expectedCurrent) {
          fail(`isCurrent(${e.id}, ${generation}, ${connection}) differs`);
        }
      }
    }
  }
}

type Step = (model: Model, real: Real) => void;

function command(label: string, step: Step): fc.Command<Model, Real> {
  return {
    check: () => true,
    run: (model, real) => {
      applyDeadlines(model);
      step(model, real);
      applyDeadlines(model);
      expectState(model, real);
    },
    toString: () => label,
  };
}

const slot = fc.integer({ min: 0, max: SLOTS - 1 });
const actor = fc.oneof({ arbitrary: fc.constant(-1), weight: 3 }, { arbitrary: slot, weight: 1 });
const index = fc.oneof(
  { arbitrary: fc.constant(-1), weight: 3 },
  { arbitrary: fc.nat({ max: 7 }), weight: 1 },
);
const secretPick = fc.constantFrom<SecretPick>(
  'proof',
  'proof',
  'proof',
  'candidate',
  'candidate',
  'candidate',
  'retired',
  'foreign',
  'garbage',
);
const generationOffset = fc.constantFrom(0, 0, 0, 0, 0, -1, 1);

const create = slot.map((s) =>
  command(`create(${s})`, (model, real) => {
    const connection = model.connections[s]!;
    const expected = heldBy(model, connection) ? 'conflict' : 'ok';
    const result = attempt(() => real.registry.create(connection));
    expectOutcome('create', result.code, expected);
    if (result.error) return expectNoSecret(model, result.error);
    const created = result.value as Record<string, unknown>;
    const secret = created.resume_secret as string;
    if (model.secrets.includes(secret)) fail('a secret was issued twice');
    if (created.executor_generation !== 1) fail('create did not answer generation 1');
    expectNoSecret(model, projectExecutorResultForLookup(created as never));
    model.secrets.push(secret);
    model.executors.push({
      id: created.executor_id as string,
      generation: 1,
      proof: secret,
      candidate: null,
      confirmed: false,
      holder: connection,
      pins: 0,
      confirmDeadline: model.now + CONFIRM_MS,
      idleDeadline: null,
      gone: false,
      issued: [secret],
    });
  }),
);

const confirm = fc.tuple(actor, index, secretPick).map(([s, i, pick]) =>
  command(`confirm(${s},${i},${pick})`, (model, real) => {
    const e = target(model, i);
    const connection = connectionFor(model, s, e);
    const secret = pickSecret(model, e, pick);
    let expected = 'ok';
    if (!e || e.gone || secret !== e.proof) expected = 'unauthorized';
    else if (e.confirmed || e.holder !== connection) expected = 'stale_connection';
    const result = attempt(() =>
      real.registry.confirm(connection, { executor_id: e?.id ?? 'exe_unknown', resume_secret: secret }),
    );
    expectOutcome('confirm', result.code, expected);
    expectNoSecret(model, result.value, result.error);
    if (result.code !== 'ok' || !e) return;
    e.confirmed = true;
    if ((result.value as { executor_generation: number }).executor_generation !== e.generation) {
      fail('confirm changed the generation');
    }
  }),
);

const resume = fc.tuple(actor, index, secretPick).map(([s, i, pick]) =>
  command(`resume(${s},${i},${pick})`, (model, real) => {
    const e = target(model, i);
    const connection = connectionFor(model, s, e);
    const secret = pickSecret(model, e, pick);
    const byCandidate = e?.candidate?.secret === secret;
    let expected = 'ok';
    if (!e || e.gone || (secret !== e.proof && !byCandidate)) expected = 'unauthorized';
    else if (heldBy(model, connection) && heldBy(model, connection) !== e) expected = 'conflict';
    const result = attempt(() =>
      real.registry.resume(connection, { executor_id: e?.id ?? 'exe_unknown', resume_secret: secret }),
    );
    expectOutcome(`resume${byCandidate ? '-candidate' : ''}`, result.code, expected);
    expectNoSecret(model, result.value, result.error);
    if (result.code !== 'ok' || !e) return;
    if (e.candidate && byCandidate) e.proof = e.candidate.secret;
    e.candidate = null;
    e.holder = connection;
    e.confirmed = true;
    e.generation += 1;
    e.idleDeadline = null;
    if ((result.value as { executor_generation: number }).executor_generation !== e.generation) {
      fail('resume answered the wrong generation');
    }
  }),
);

/**
 * The refusal for rotate or release, or null. They carry no secret, so holding `e` is the proof: a
 * connection that does not hold it is refused as if it did not exist.
 */
function holderRefusal(e: ModelExecutor | undefined, connection: string, generation: number): string | null {
  if (!e || e.gone || e.holder !== connection) return 'unauthorized';
  if (e.generation !== generation) return 'stale_connection';
  return null;
}

const rotate = fc.tuple(actor, index, generationOffset).map(([s, i, offset]) =>
  command(`rotate(${s},${i},${offset})`, (model, real) => {
    const e = target(model, i);
    const connection = connectionFor(model, s, e);
    const generation = (e?.generation ?? 1) + offset;
    let expected = holderRefusal(e, connection, generation) ?? 'ok';
    if (expected === 'ok' && !e?.confirmed) expected = 'stale_connection';
    const result = attempt(() =>
      real.registry.rotate(connection, {
        executor_id: e?.id ?? 'exe_unknown',
        executor_generation: generation,
      }),
    );
    expectOutcome('rotate', result.code, expected);
    if (result.error) expectNoSecret(model, result.error);
    if (result.code !== 'ok' || !e) return;
    const rotated = result.value as { resume_secret: string; status: string; pending_timeout_ms: number };
    if (rotated.status !== 'rotation_pending' || rotated.pending_timeout_ms !== ROTATION_MS) {
      fail('rotate answered the wrong status');
    }
    expectNoSecret(model, projectExecutorResultForLookup(rotated as never));
    model.secrets.push(rotated.resume_secret);
    e.issued.push(rotated.resume_secret);
    e.candidate = { secret: rotated.resume_secret, deadline: model.now + ROTATION_MS };
  }),
);

const rotateConfirm = fc.tuple(actor, index, generationOffset, secretPick).map(([s, i, offset, pick]) =>
  command(`rotateConfirm(${s},${i},${offset},${pick})`, (model, real) => {
    const e = target(model, i);
    const connection = connectionFor(model, s, e);
    const generation = (e?.generation ?? 1) + offset;
    const secret = pickSecret(model, e, pick);
    const proven = e?.holder === connection || secret === e?.proof || secret === e?.candidate?.secret;
    let expected = 'ok';
    if (!e || e.gone || !proven) expected = 'unauthorized';
    else if (e.holder !== connection || e.generation !== generation) expected = 'stale_connection';
    else if (!e.confirmed || !e.candidate) expected = 'stale_connection';
    else if (secret !== e.candidate.secret) expected = 'unauthorized';
    const result = attempt(() =>
      real.registry.rotateConfirm(connection, {
        executor_id: e?.id ?? 'exe_unknown',
        executor_generation: generation,
        resume_secret: secret,
      }),
    );
    expectOutcome('rotateConfirm', result.code, expected);
    expectNoSecret(model, result.value, result.error);
    if (result.code !== 'ok' || !e?.candidate) return;
    e.proof = e.candidate.secret;
    e.candidate = null;
  }),
);

const release = fc.tuple(actor, index, generationOffset).map(([s, i, offset]) =>
  command(`release(${s},${i},${offset})`, (model, real) => {
    const e = target(model, i);
    const connection = connectionFor(model, s, e);
    const generation = (e?.generation ?? 1) + offset;
    const expected = holderRefusal(e, connection, generation) ?? 'ok';
    const result = attempt(() =>
      real.registry.release(connection, {
        executor_id: e?.id ?? 'exe_unknown',
        executor_generation: generation,
      }),
    );
    expectOutcome('release', result.code, expected);
    expectNoSecret(model, result.value, result.error);
    if (result.code !== 'ok' || !e) return;
    e.gone = true;
    e.candidate = null;
  }),
);

const disconnect = slot.map((s) =>
  command(`disconnect(${s})`, (model, real) => {
    const connection = model.connections[s]!;
    real.registry.connectionClosed(connection);
    const e = heldBy(model, connection);
    if (e) {
      e.holder = null;
      startIdle(model, e);
    }
    model.opened += 1;
    model.connections[s] = `conn-${model.opened}`;
  }),
);

const pin = index.map((i) =>
  command(`pin(${i})`, (model, real) => {
    const e = target(model, i);
    const pinned = real.registry.pin(e?.id ?? 'exe_unknown');
    if (pinned !== (e !== undefined && !e.gone)) fail('pin answered wrongly');
    if (!e || e.gone) return;
    e.pins += 1;
    if (e.confirmed) e.idleDeadline = null;
  }),
);

const unpin = index.map((i) =>
  command(`unpin(${i})`, (model, real) => {
    const e = target(model, i);
    real.registry.unpin(e?.id ?? 'exe_unknown');
    if (!e || e.gone || e.pins === 0) return;
    e.pins -= 1;
    startIdle(model, e);
  }),
);

function nextDeadline(model: Model): number | undefined {
  const deadlines = live(model).flatMap((e) => [
    e.confirmed ? e.idleDeadline : e.confirmDeadline,
    e.candidate?.deadline ?? null,
  ]);
  const upcoming = deadlines.filter((d): d is number => d !== null && d > model.now);
  return upcoming.length === 0 ? undefined : Math.min(...upcoming);
}

const advance = fc
  .oneof(
    fc.constantFrom('deadline', 'just-before-deadline'),
    fc.constantFrom(1, 1_000, 20_000, 30_000, CONFIRM_MS - 1, CONFIRM_MS, IDLE_MS - 1, IDLE_MS),
  )
  .map((how) =>
    command(`advance(${how})`, (model, real) => {
      const deadline = nextDeadline(model);
      let ms = typeof how === 'number' ? how : 1_000;
      if (how === 'deadline' && deadline !== undefined) ms = deadline - model.now;
      if (how === 'just-before-deadline' && deadline !== undefined)
        ms = Math.max(deadline - model.now - 1, 0);
      observed.add(`advance:${how}`);
      real.clock.advance(ms);
      model.now += ms;
    }),
  );

const commands = fc.commands(
  [
    create,
    confirm,
    confirm,
    resume,
    resume,
    resume,
    rotate,
    rotate,
    rotateConfirm,
    rotateConfirm,
    rotateConfirm,
    release,
    disconnect,
    disconnect,
    pin,
    unpin,
    advance,
    advance,
  ],
  { maxCommands: 100, size: 'max' },
);

t.test('at every step the registry accepts exactly the proofs the spec allows', async (t) => {
  const details = fc.check(
    fc.property(commands, (sequence) => {
      const { registry, clock } = registryFixture();
      const model: Model = {
        now: 0,
        executors: [],
        connections: Array.from({ length: SLOTS }, (_, i) => `conn-${i}`),
        opened: SLOTS - 1,
        secrets: [],
      };
      fc.modelRun(() => ({ model, real: { registry, clock } }), sequence);
    }),
    { numRuns: 1_000 },
  );
  t.notOk(details.failed, fc.defaultReportMessage(details) ?? 'passed');
  t.equal(details.numRuns, 1_000);
});

t.test('the generated sequences reached every rule at least once', async (t) => {
  const required = [
    'create:ok',
    'create:conflict',
    'confirm:ok',
    'confirm:unauthorized',
    'confirm:stale_connection',
    'resume:ok',
    'resume:unauthorized',
    'resume:conflict',
    'resume-candidate:ok',
    'rotate:ok',
    'rotate:stale_connection',
    'rotate:unauthorized',
    'rotateConfirm:ok',
    'rotateConfirm:unauthorized',
    'rotateConfirm:stale_connection',
    'release:ok',
    'release:stale_connection',
    'release:unauthorized',
    'advance:deadline',
    'advance:just-before-deadline',
  ];
  t.same(
    required.filter((label) => !observed.has(label)),
    [],
  );
});
