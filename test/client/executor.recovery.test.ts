import type { Test } from 'tap';
import t from 'tap';
import type { ExecutorRecord, ExecutorStore } from '../../client/executor-store.js';
import type { InterruptedDecision, ToolHandler } from '../../client/executor-types.js';
import { ToolFailure } from '../../client/executor-types.js';
import { MagiClient } from '../../client/magi-client.js';
import type { TerminalPayload } from '../../client/wire-types.js';
import { FIFTEEN_MINUTES, until } from '../routes/session.resources.fixture.js';
import { type LookupSession, lookupSession } from './lookup-session.js';

/** A store in memory; `saves` counts the writes, and `onSave` sees each record before it is kept. */
class MemoryStore implements ExecutorStore {
  record: ExecutorRecord | null;
  saves = 0;
  onSave: (record: ExecutorRecord | null) => Promise<void> | void = () => {};
  constructor(record: ExecutorRecord | null = null) {
    this.record = record;
  }
  async load() {
    return this.record === null ? null : structuredClone(this.record);
  }
  async save(record: ExecutorRecord | null) {
    this.saves++;
    await this.onSave(record);
    this.record = record === null ? null : structuredClone(record);
  }
}

const never = new Promise<never>(() => {});

interface Crashed extends LookupSession {
  /** What the dead application's store held when it died. */
  kept: MemoryStore;
  turnId: string;
  /** How often the first application's handler started. */
  firstRuns: number;
}

/**
 * Starts a turn whose model calls `lookup` once, with an executor keeping its record in a store, and
 * makes the application die at `moment`: while its handler runs, or once the handler's outcome is kept
 * (before it is submitted). The dead application's connections are cut and it never connects again.
 */
async function crashDuring(t: Test, moment: 'handler' | 'outcome_kept'): Promise<Crashed> {
  const scene = await lookupSession(t);
  const store = new MemoryStore();
  let died: (kept: MemoryStore) => void = () => {};
  const death = new Promise<MemoryStore>((resolve) => (died = resolve));
  const die = (record: ExecutorRecord | null = store.record) => {
    scene.net.gate = never;
    died(new MemoryStore(structuredClone(record)));
    scene.net.current.cut();
  };
  let firstRuns = 0;
  store.onSave = (record) => {
    if (moment === 'outcome_kept' && record?.calls[0]?.outcome) {
      die(record);
      return never;
    }
  };
  const executor = await scene.client.startExecutor(
    {
      lookup: () => {
        firstRuns++;
        if (moment === 'outcome_kept') return {};
        die();
        return never;
      },
    },
    { store, retryDelayMs: 1 },
  );
  // The dead application: its executor stops trying to reconnect (its last write never finishes).
  t.teardown(() => void executor.close());
  scene.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
  const turn = await scene.session.startTurn('go', { executor });
  const kept = await death;
  await until(() => scene.daemon.app.executors.attachmentOf(executor.id) === null, 'the executor to detach');
  return { ...scene, kept, turnId: turn.accepted.turn_id, firstRuns };
}

/** The restarted application: a new client, the executor resumed from what was kept. */
async function restart(
  t: Test,
  crashed: Crashed,
  handlers: Record<string, ToolHandler>,
  onInterrupted?: (call: unknown) => InterruptedDecision,
) {
  const client = await MagiClient.over(() => crashed.daemon.open('socket'));
  t.teardown(() => client.close());
  const resumed = await client.resumeExecutor(handlers, {
    store: crashed.kept,
    retryDelayMs: 1,
    ...(onInterrupted ? { onInterrupted } : {}),
  });
  if (resumed?.executor) t.teardown(() => resumed.executor?.close());
  return { client, resumed };
}

async function terminalAndEvidence(
  crashed: Crashed,
  resumed: NonNullable<Awaited<ReturnType<typeof restart>>['resumed']>,
) {
  const session = resumed.sessions.get(crashed.session.id)!;
  const terminal = await session.terminal(crashed.turnId);
  const evidence = await session.evidence(crashed.turnId);
  return { terminal, evidence };
}

t.test(
  'the store keeps the executor from its creation, each call before its handler runs, and forgets it once settled',
  async (t) => {
    const scene = await lookupSession(t);
    const store = new MemoryStore();
    let duringHandler: ExecutorRecord | null = null;
    const executor = await scene.client.startExecutor(
      {
        lookup: () => {
          duringHandler = structuredClone(store.record);
          return {};
        },
      },
      { store, retryDelayMs: 1 },
    );
    t.teardown(() => executor.close());
    t.match(store.record, {
      version: 1,
      instance_id: scene.client.initialized.instance_id,
      executor_id: executor.id,
      executor_generation: 1,
      resume_secret: /^\S{43}$/,
      candidate_secret: null,
      calls: [],
      turns: [],
    });
    scene.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
    const turn = await scene.session.startTurn('go', { executor });
    for await (const _ of turn.events);
    t.match(duringHandler, {
      calls: [{ name: 'lookup', arguments: { path: 'a' }, outcome: null, operations: [] }],
      turns: [{ session_id: scene.session.id, turn_id: turn.accepted.turn_id }],
    });
    const [callId] = [...executor.calls.keys()];
    t.equal(await executor.settled(callId!), 'accepted');
    await until(() => store.record?.calls.length === 0, 'the settled call to be forgotten');
    t.same(executor.turns, [{ session_id: scene.session.id, turn_id: turn.accepted.turn_id }]);

    const secret = store.record!.resume_secret;
    await executor.rotate();
    t.not(store.record!.resume_secret, secret, 'a rotation is kept');
    t.equal(store.record!.candidate_secret, null);
    await executor.close();
    t.equal(store.record, null, 'a released executor is forgotten');
  },
);

t.test(
  'after a crash with the outcome kept, the restarted application delivers it: the handler ran once',
  async (t) => {
    const crashed = await crashDuring(t, 'outcome_kept');
    const deadSecret = crashed.kept.record!.resume_secret;
    let secondRuns = 0;
    const { resumed } = await restart(t, crashed, {
      lookup: () => {
        secondRuns++;
        return {};
      },
    });
    t.ok(resumed, 'the executor resumed');
    t.equal(resumed!.executor!.generation, 2, 'at a new generation');
    t.match(resumed!.pending, [
      { session_id: crashed.session.id, turn_id: crashed.turnId, status: 'pending' },
    ]);
    t.same([...resumed!.sessions.keys()], [crashed.session.id], 'its session claimed');
    t.same(
      resumed!.turns,
      [{ session_id: crashed.session.id, turn_id: crashed.turnId, terminal: null }],
      'its turn, still running',
    );
    const { terminal, evidence } = await terminalAndEvidence(crashed, resumed!);
    t.equal(terminal.status, 'completed');
    t.match(evidence.calls, [{ status: 'succeeded', external_effects: 'reported' }]);
    t.equal(crashed.firstRuns, 1);
    t.equal(secondRuns, 0, 'the handler ran exactly once in all');
    t.not(crashed.kept.record!.resume_secret, deadSecret, 'the secret was rotated, and the new one kept');
    await until(() => crashed.kept.record?.calls.length === 0, 'the delivered call to be forgotten');
  },
);

t.test('a call interrupted in its handler is by default answered failed and not run again', async (t) => {
  const crashed = await crashDuring(t, 'handler');
  let secondRuns = 0;
  const { resumed } = await restart(t, crashed, {
    lookup: () => {
      secondRuns++;
      return {};
    },
  });
  const { terminal, evidence } = await terminalAndEvidence(crashed, resumed!);
  t.equal(terminal.status, 'completed', 'the model went on with the error');
  t.match(evidence.calls, [{ status: 'failed', external_effects: 'reported' }]);
  t.equal(secondRuns, 0);
  const request = await lastToolMessage(crashed);
  t.same(request, {
    error: {
      code: 'execution_failed',
      message: 'the application stopped while the call ran, and did not run it again',
    },
  });
});

t.test('onInterrupted decides an interrupted call: a kept value, a failure, or a new run', async (t) => {
  for (const [decision, expected, runs] of [
    [{ value: {} }, 'succeeded', 0],
    [{ failure: new ToolFailure('permission_denied', 'the user said no') }, 'failed', 0],
    [{ run: true }, 'succeeded', 1],
  ] as const) {
    await t.test(Object.keys(decision)[0]!, async (t) => {
      const crashed = await crashDuring(t, 'handler');
      let secondRuns = 0;
      const seen: unknown[] = [];
      const { resumed } = await restart(
        t,
        crashed,
        {
          lookup: () => {
            secondRuns++;
            return {};
          },
        },
        (call) => {
          seen.push(call);
          return decision as InterruptedDecision;
        },
      );
      const { evidence } = await terminalAndEvidence(crashed, resumed!);
      t.match(evidence.calls, [{ status: expected }]);
      t.equal(secondRuns, runs);
      t.match(seen, [
        { sessionId: crashed.session.id, turnId: crashed.turnId, name: 'lookup', arguments: { path: 'a' } },
      ]);
    });
  }
});

t.test(
  'a kept executor of another daemon instance is never shown to this one: its turns are reported from the history, the store is cleared',
  async (t) => {
    const crashed = await crashDuring(t, 'handler');
    const ended = await stopTurn(t, crashed);
    crashed.kept.record = { ...crashed.kept.record!, instance_id: 'inst_another' };
    const sent: string[] = [];
    const cleared: Array<{ sent: string[] }> = [];
    crashed.kept.onSave = (record) => {
      if (record === null) cleared.push({ sent: [...sent] });
    };
    const client = await MagiClient.over(async () => {
      const wire = await crashed.daemon.open('socket');
      const send = wire.send.bind(wire);
      wire.send = (method, payload, envelope) => {
        sent.push(method);
        return send(method, payload, envelope);
      };
      return wire;
    });
    t.teardown(() => client.close());
    const resumed = await client.resumeExecutor({}, { store: crashed.kept });
    t.same(resumed, {
      executor: null,
      pending: [],
      sessions: new Map(),
      turns: [{ session_id: crashed.session.id, turn_id: crashed.turnId, terminal: ended }],
    });
    t.equal(crashed.kept.record, null);
    t.notOk(sent.includes('executor.resume'), 'no resume was tried');
    t.ok(cleared[0]?.sent.includes('session.replay'), 'the history was read before the store was cleared');

    // The recovery loop of docs/client.md, as written there.
    const store = crashed.kept;
    const handlers = { lookup: () => ({}) };
    const reported: Array<[string, string]> = [];
    const executor = resumed?.executor ?? (await client.startExecutor(handlers, { store }));
    t.teardown(() => executor.close());
    for (const { session_id, turn_id, terminal } of resumed?.turns ?? []) {
      const session = resumed!.sessions.get(session_id) ?? (await client.claimSession(session_id));
      reported.push([turn_id, (terminal ?? (await session.terminal(turn_id))).status]);
    }
    t.same(reported, [[crashed.turnId, 'cancelled']]);
    t.equal(store.record?.executor_id, executor.id, 'the new executor is kept');
  },
);

t.test(
  'an executor that expired while the application was down does not resume; its turns are reported, the store is cleared',
  async (t) => {
    const crashed = await crashDuring(t, 'handler');
    // The active turn pins its executor: once it is stopped, the 15 minutes of a detached executor run.
    const ended = await stopTurn(t, crashed);
    crashed.daemon.clock.advance(FIFTEEN_MINUTES);
    const { resumed } = await restart(t, crashed, {});
    t.match(resumed, {
      executor: null,
      pending: [],
      turns: [{ session_id: crashed.session.id, turn_id: crashed.turnId, terminal: ended }],
    });
    t.equal(crashed.kept.record, null);
  },
);
t.test('an empty store resumes nothing', async (t) => {
  const { daemon } = await lookupSession(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  t.teardown(() => client.close());
  t.equal(await client.resumeExecutor({}, { store: new MemoryStore() }), null);
});

/** Stops the crashed application's turn from another client; its `cancelled` terminal. */
async function stopTurn(t: Test, crashed: Crashed): Promise<TerminalPayload> {
  const other = await MagiClient.over(() => crashed.daemon.open('socket'));
  t.teardown(() => other.close());
  const session = await other.claimSession(crashed.session.id);
  await session.stopTurn(crashed.turnId);
  const terminal = await session.terminal(crashed.turnId);
  t.equal(terminal.status, 'cancelled');
  await session.release();
  return terminal;
}

/** The tool message the model got for the call, from the continuation request. */
async function lastToolMessage(crashed: Crashed): Promise<unknown> {
  await crashed.provider.nextRequest();
  const continuation = await crashed.provider.nextRequest();
  return JSON.parse(continuation.body.messages.at(-1).content);
}
