import { inspect } from 'node:util';
import t from 'tap';
import type { ExecutorRegistry } from '../../../core/executors/executor-registry.js';
import { projectExecutorResultForLookup } from '../../../core/executors/lookup-projection.js';
import { newId } from '../../../core/ids.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { confirmedExecutor, refusal, registryFixture } from './executor-fixture.js';

const SIXTY_SECONDS = 60_000;
const WRONG_SECRET = 'A'.repeat(43);

/** Every way a value could be written out: JSON, inspection, string conversion and stack. */
function renderings(value: unknown): string[] {
  const texts = [
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true, customInspect: false }),
  ];
  try {
    texts.push(JSON.stringify(value) ?? '');
  } catch {
    texts.push('<unserializable>');
  }
  if (value instanceof Error) texts.push(String(value), value.stack ?? '', value.message);
  return texts;
}

t.test('secrets appear only in the direct create and rotate results', async (t) => {
  const hookArguments: unknown[] = [];
  const { clock, registry } = registryFixture({
    pendingCalls: (executorId) => {
      hookArguments.push(executorId);
      return [];
    },
  });
  const secrets: string[] = [];
  const issuing: unknown[] = [];
  const elsewhere: unknown[] = [];

  const attempt = (action: () => unknown): void => {
    try {
      const result = action();
      elsewhere.push(result);
      if (result && typeof result === 'object' && 'executor_id' in result) {
        elsewhere.push(projectExecutorResultForLookup(result as never));
      }
    } catch (error) {
      elsewhere.push(error);
    }
  };
  const issue = <T extends { resume_secret: string }>(action: () => T): T => {
    const result = action();
    secrets.push(result.resume_secret);
    issuing.push(result);
    elsewhere.push(projectExecutorResultForLookup(result as never));
    return result;
  };
  const snapshot = () => elsewhere.push(registry, registry.toJSON(), registry.view(), String(registry));

  const a = issue(() => registry.create('c1'));
  const lost = issue(() => registry.create('c9'));
  snapshot();
  attempt(() => registry.create('c1'));
  attempt(() => registry.confirm('c2', a));
  attempt(() => registry.confirm('c1', { executor_id: a.executor_id, resume_secret: lost.resume_secret }));
  attempt(() => registry.confirm('c1', a));
  attempt(() => registry.confirm('c1', a));
  const r1 = issue(() => registry.rotate('c1', a));
  snapshot();
  attempt(() => registry.rotateConfirm('c1', { ...a, resume_secret: a.resume_secret }));
  const r2 = issue(() => registry.rotate('c1', a));
  attempt(() => registry.rotateConfirm('c1', { ...a, resume_secret: r1.resume_secret }));
  attempt(() => registry.rotateConfirm('c1', { ...a, resume_secret: r2.resume_secret }));
  attempt(() => registry.rotateConfirm('c1', { ...a, resume_secret: r2.resume_secret }));
  attempt(() => registry.resume('c2', { executor_id: a.executor_id, resume_secret: a.resume_secret }));
  attempt(() => registry.resume('c2', { executor_id: a.executor_id, resume_secret: r2.resume_secret }));
  const r3 = issue(() => registry.rotate('c2', { executor_id: a.executor_id, executor_generation: 2 }));
  snapshot();
  registry.connectionClosed('c2');
  attempt(() => registry.rotate('c2', { executor_id: a.executor_id, executor_generation: 2 }));
  attempt(() => registry.resume('c3', { executor_id: a.executor_id, resume_secret: r3.resume_secret }));
  attempt(() => registry.attachedTo('c3'));
  attempt(() => registry.attachmentOf(a.executor_id));
  attempt(() => registry.isCurrent(a.executor_id, 3, 'c3'));
  attempt(() => registry.pin(a.executor_id));
  attempt(() => registry.unpin(a.executor_id));
  attempt(() => registry.release('c1', { executor_id: a.executor_id, executor_generation: 3 }));
  attempt(() => registry.release('c3', { executor_id: a.executor_id, executor_generation: 3 }));
  attempt(() => registry.resume('c3', { executor_id: a.executor_id, resume_secret: r3.resume_secret }));
  attempt(() => registry.resume('c3', { executor_id: lost.executor_id, resume_secret: a.resume_secret }));
  snapshot();
  clock.advance(SIXTY_SECONDS);
  attempt(() => registry.resume('c3', lost));
  attempt(() => registry.size);
  snapshot();
  registry.clear();
  snapshot();

  t.equal(secrets.length, 5);
  t.equal(new Set(secrets).size, 5);
  for (const [index, result] of issuing.entries()) {
    t.ok(JSON.stringify(result).includes(secrets[index] ?? '-'), 'the issuing result does carry its secret');
  }
  const searched = [...elsewhere, ...hookArguments].flatMap(renderings);
  t.ok(searched.length > 100, 'a substantial body of output was searched');
  t.ok(
    searched.some((text) => text.includes(a.executor_id)),
    'the search sees identities, so it would see secrets too',
  );
  for (const secret of secrets) {
    const hex = Buffer.from(secret, 'base64url').toString('hex');
    const leaks = searched.filter((text) => text.includes(secret) || text.includes(hex));
    t.same(leaks, [], 'no secret anywhere but its issuing result');
  }
});

t.test('a lost create reply cannot be recovered', async (t) => {
  const { clock, registry } = registryFixture();
  const lost = registry.create('c1');
  registry.connectionClosed('c1');
  const views = [registry.toJSON(), inspect(registry), registry.attachedTo('c1')];
  t.notMatch(JSON.stringify(views), lost.resume_secret);
  const fresh = registry.create('c2');
  t.equal(registry.confirm('c2', fresh).executor_generation, 1, 'the application starts over');
  clock.advance(SIXTY_SECONDS);
  t.same(
    registry.view().map((entry) => entry.executor_id),
    [fresh.executor_id],
    'the unconfirmed executor expired, freeing its slot',
  );
});

/**
 * Executors in every state a stranger could probe, on connections c1 to c5, and the connections that
 * hold no proof of each: one that never held anything, and the one each executor left behind.
 */
function probedExecutors(registry: ExecutorRegistry) {
  const rotating = confirmedExecutor(registry, 'c1');
  registry.rotate('c1', rotating);
  const provisional = registry.create('c2');
  const detached = confirmedExecutor(registry, 'c3');
  registry.connectionClosed('c3');
  const fenced = confirmedExecutor(registry, 'c4');
  registry.resume('c5', fenced);
  return [
    { executor: rotating, generation: 1, strangers: ['c9'] },
    { executor: provisional, generation: 1, strangers: ['c9'] },
    { executor: detached, generation: 1, strangers: ['c9', 'c3'] },
    { executor: fenced, generation: 2, strangers: ['c9', 'c4'] },
  ];
}

/** Every executor method but create, as a caller without proof would send it. */
function unprovenActions(
  registry: ExecutorRegistry,
  connectionId: string,
  executorId: string,
  generation: number,
) {
  const identity = { executor_id: executorId, executor_generation: generation };
  const guess = { executor_id: executorId, resume_secret: WRONG_SECRET };
  return {
    confirm: () => registry.confirm(connectionId, guess),
    resume: () => registry.resume(connectionId, guess),
    rotate: () => registry.rotate(connectionId, identity),
    rotate_confirm: () => registry.rotateConfirm(connectionId, { ...identity, resume_secret: WRONG_SECRET }),
    release: () => registry.release(connectionId, identity),
  };
}

t.test('without proof, an existing executor is refused exactly like an unknown one', async (t) => {
  const { registry } = registryFixture();
  const probed = probedExecutors(registry);
  const before = registry.view();
  let compared = 0;
  for (const { executor, generation, strangers } of probed) {
    for (const stranger of strangers) {
      const existing = unprovenActions(registry, stranger, executor.executor_id, generation);
      const unknown = unprovenActions(registry, stranger, newId('exe'), generation);
      for (const [method, action] of Object.entries(existing)) {
        const answer = refusal(action);
        t.match(answer, { code: 'unauthorized' }, `${method} from ${stranger}`);
        t.same(answer, refusal(unknown[method as keyof typeof unknown]), `${method}: the same answer`);
        compared += 1;
      }
    }
  }
  t.equal(compared, 30);
  t.same(registry.view(), before, 'no refusal changed anything');
});

t.test(
  'without proof, an existing executor costs the same verifier comparisons as an unknown one',
  async (t) => {
    const hashing = await import('../../../core/hashing.js');
    let comparisons = 0;
    const { ExecutorRegistry: CountingRegistry } = await t.mockImport<
      typeof import('../../../core/executors/executor-registry.js')
    >('../../../core/executors/executor-registry.js', {
      '../../../core/hashing.js': {
        ...hashing,
        matchesVerifier: (presented: unknown, verifier: Buffer) => {
          comparisons += 1;
          return hashing.matchesVerifier(presented, verifier);
        },
      },
    });
    const registry = new CountingRegistry({ clock: fakeClock() });
    const counted = (action: () => unknown): number => {
      const start = comparisons;
      refusal(action);
      return comparisons - start;
    };
    const expected = { confirm: 1, resume: 2, rotate: 0, rotate_confirm: 2, release: 0 };
    for (const { executor, generation, strangers } of probedExecutors(registry)) {
      for (const stranger of strangers) {
        const existing = unprovenActions(registry, stranger, executor.executor_id, generation);
        const unknown = unprovenActions(registry, stranger, newId('exe'), generation);
        const costs = Object.fromEntries(
          Object.entries(existing).map(([method, action]) => [method, counted(action)]),
        );
        const unknownCosts = Object.fromEntries(
          Object.entries(unknown).map(([method, action]) => [method, counted(action)]),
        );
        t.same(costs, expected, `an existing executor, from ${stranger}`);
        t.same(unknownCosts, expected, `an unknown executor, from ${stranger}`);
      }
    }
  },
);
