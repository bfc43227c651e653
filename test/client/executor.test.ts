import type { Test } from 'tap';
import t from 'tap';
import type { ApplicationExecutor } from '../../client/executor.js';
import { MagiClient } from '../../client/magi-client.js';
import type { EvidenceResult, TerminalPayload } from '../../client/wire-types.js';
import type { Clock } from '../../core/clock.js';
import { PROFILE_LIMITS } from '../../core/limits.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { until } from '../routes/session.resources.fixture.js';
import { heldLookupCall } from '../routes/turn.fixture.js';
import { type LookupSession, lookupSession } from './lookup-session.js';
import type { Frame, Severable } from './severable.js';

interface Scene extends LookupSession {
  executor: ApplicationExecutor;
  /** How often the tool's handler has run. */
  runs(): number;
  /** Every request the application wrote, in order. */
  sent: Frame[];
}

/**
 * A session with the `lookup` tool and an executor on one cuttable connection; `during` runs inside
 * the handler, before it returns `{}`.
 */
async function scene(
  t: Test,
  during?: (executor: ApplicationExecutor) => unknown,
  /** The executor's retry options; by default a 1 ms real-time wait. */
  retry: (daemon: TestDaemon) => { retryDelayMs: number; clock?: Clock } = () => ({ retryDelayMs: 1 }),
): Promise<Scene> {
  const { daemon, provider, net, client, session } = await lookupSession(t);
  const sent: Frame[] = [];
  let runs = 0;
  const executor: ApplicationExecutor = await client.startExecutor(
    {
      lookup: async () => {
        runs++;
        await during?.(executor);
        return {};
      },
    },
    retry(daemon),
  );
  t.teardown(() => executor.close());
  const send = net.beforeSend;
  net.beforeSend = (frame, line) => {
    sent.push(frame);
    return send(frame, line);
  };
  return { daemon, provider, net, client, session, executor, runs: () => runs, sent };
}

/** The turn's terminal and evidence, read by a controller that claims the session afterwards. */
async function outcome(
  scene: Scene,
  turnId: string,
): Promise<{ terminal: TerminalPayload; evidence: EvidenceResult }> {
  const observer = await MagiClient.over(() => scene.daemon.open('socket'));
  const watching = await observer.claimSession(scene.session.id);
  const terminal = await watching.terminal(turnId);
  return { terminal, evidence: await watching.evidence(turnId) };
}

/** Loses the answer to the first request of `method`, cutting the connection when it arrives. */
function loseAnswerTo(net: Severable, method: string): void {
  let id: string | null = null;
  const send = net.beforeSend;
  net.beforeSend = (frame, line) => {
    if (id === null && frame.method === method) id = frame.id;
    return send(frame, line);
  };
  net.beforeReceive = (frame, line) => {
    if (id === null || frame.id !== id) return true;
    line.cut();
    return false;
  };
}

/** Cuts the connection instead of writing the first request of `method`: it never reaches the daemon. */
function loseRequest(net: Severable, method: string): void {
  let lost = false;
  const send = net.beforeSend;
  net.beforeSend = (frame, line) => {
    if (lost || frame.method !== method) return send(frame, line);
    lost = true;
    send(frame, line);
    line.cut();
    return false;
  };
}

function results(scene: Scene): Frame[] {
  return scene.sent.filter((frame) => frame.method === 'turn.application_tool_result');
}

async function ranOnceAndSettled(t: Test, scene: Scene, turnId: string): Promise<void> {
  const { terminal, evidence } = await outcome(scene, turnId);
  t.equal(scene.runs(), 1, 'the handler ran exactly once');
  t.equal(terminal.status, 'completed', 'the turn completed');
  t.equal(evidence.calls.length, 1);
  t.match(evidence.calls[0], {
    status: 'succeeded',
    external_effects: 'reported',
    executor_id: scene.executor.id,
    executor_generation: 1,
    wait_kind: null,
    remaining_ms: null,
  });
  t.equal(await scene.executor.settled(evidence.calls[0]!.call_id), 'accepted', 'the executor agrees');
  t.equal(scene.provider.unexpected, 0);
}

/** Cuts the executor's connection once more and waits until it has resumed with the proof it kept. */
async function resumesAgain(t: Test, scene: Scene): Promise<void> {
  const before = scene.executor.generation;
  scene.net.current.cut();
  await until(() => scene.executor.generation > before || scene.executor.lost !== null, 'a resume');
  t.equal(scene.executor.lost, null, 'the secret the executor kept still resumes it');
}

t.test('without a cut, the call runs once and its result is accepted', async (t) => {
  const s = await scene(t);
  s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
  const turn = await s.session.startTurn('go', { executor: s.executor });
  await ranOnceAndSettled(t, s, turn.accepted.turn_id);
  t.equal(results(s).length, 1);
});

t.test('cut before dispatch: the call waits and runs once on the resumed connection', async (t) => {
  const s = await scene(t);
  const hold = heldLookupCall(s.provider);
  s.provider.reply(['done']);
  const turn = await s.session.startTurn('go', { executor: s.executor });
  await hold.reached;
  let reopen: () => void = () => {};
  s.net.gate = new Promise((resolve) => (reopen = resolve));
  s.net.current.cut();
  await until(() => s.daemon.app.executors.attachmentOf(s.executor.id) === null, 'the executor to detach');
  hold.release();
  await until(() => s.daemon.app.turns.pendingCalls(s.executor.id).length === 1, 'the call to wait');
  t.equal(s.runs(), 0, 'nothing runs while the executor is away');
  reopen();
  await ranOnceAndSettled(t, s, turn.accepted.turn_id);
  t.equal(s.executor.generation, 2);
});

t.test(
  'cut after dispatch, while the handler runs: the retained result goes with the new generation',
  async (t) => {
    let cut = () => {};
    const s = await scene(t, () => cut());
    cut = () => s.net.current.cut();
    s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
    const turn = await s.session.startTurn('go', { executor: s.executor });
    await ranOnceAndSettled(t, s, turn.accepted.turn_id);
    t.equal(results(s).at(-1).payload.executor_generation, 2, 'accepted at the resumed generation');
  },
);

t.test('a dispatch lost with its connection is answered failed, never run', async (t) => {
  const s = await scene(t);
  s.net.beforeReceive = (frame, line) => {
    if (frame.event !== 'turn.application_tool_call') return true;
    line.cut();
    return false;
  };
  s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
  const turn = await s.session.startTurn('go', { executor: s.executor });
  const { terminal, evidence } = await outcome(s, turn.accepted.turn_id);
  t.equal(s.runs(), 0, 'the handler never ran');
  t.equal(terminal.status, 'completed');
  t.match(evidence.calls, [{ status: 'failed', external_effects: 'reported' }]);
  t.equal(await s.executor.settled(evidence.calls[0]!.call_id), 'accepted');
});

t.test(
  'cut after the result is sent, before its acknowledgment: reconciled by lookup, not resent',
  async (t) => {
    const s = await scene(t);
    loseAnswerTo(s.net, 'turn.application_tool_result');
    s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
    const turn = await s.session.startTurn('go', { executor: s.executor });
    await ranOnceAndSettled(t, s, turn.accepted.turn_id);
    t.equal(results(s).length, 1, 'the result was submitted once');
    const lookups = s.sent.filter((frame) => frame.method === 'operation.lookup');
    t.same(
      lookups.map((frame) => frame.payload.operation_id),
      [results(s)[0].operation_id],
      'its lost acknowledgment was looked up',
    );
  },
);

t.test('a result that never reached the daemon is submitted again with the new generation', async (t) => {
  const s = await scene(t);
  loseRequest(s.net, 'turn.application_tool_result');
  s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
  const turn = await s.session.startTurn('go', { executor: s.executor });
  await ranOnceAndSettled(t, s, turn.accepted.turn_id);
  t.same(
    results(s).map((frame) => frame.payload.executor_generation),
    [1, 2],
  );
});

t.test('a transient refusal of a result is retried; the call still runs once', async (t) => {
  const s = await scene(t);
  let refused = false;
  const send = s.net.beforeSend;
  s.net.beforeSend = (frame, line) => {
    send(frame, line);
    if (refused || frame.method !== 'turn.application_tool_result') return true;
    refused = true;
    line.deliver({
      type: 'response',
      id: frame.id,
      instance_id: 'inst_x',
      ok: false,
      error: { code: 'limit_exceeded', message: 'retry later' },
    });
    return false;
  };
  s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
  const turn = await s.session.startTurn('go', { executor: s.executor });
  await ranOnceAndSettled(t, s, turn.accepted.turn_id);
  t.equal(results(s).length, 2, 'submitted again after the refusal');
});

for (const [step, lose] of [
  ['the rotate answer is lost', (net: Severable) => loseAnswerTo(net, 'executor.rotate')],
  ['the rotate_confirm answer is lost', (net: Severable) => loseAnswerTo(net, 'executor.rotate_confirm')],
  ['the rotate_confirm never arrives', (net: Severable) => loseRequest(net, 'executor.rotate_confirm')],
] as const) {
  t.test(
    `cut during a rotation (${step}): the call runs once and the kept secret still resumes`,
    async (t) => {
      let rotation: Promise<void> | null = null;
      const s = await scene(t, (executor) => {
        rotation = executor.rotate();
        return rotation.catch(() => {});
      });
      lose(s.net);
      s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
      const turn = await s.session.startTurn('go', { executor: s.executor });
      await ranOnceAndSettled(t, s, turn.accepted.turn_id);
      await t.rejects(rotation!, 'the interrupted rotation reports its failure');
      s.net.beforeReceive = () => true;
      await resumesAgain(t, s);
    },
  );
}

t.test('a completed rotation replaces the proof: the new secret resumes the executor', async (t) => {
  const s = await scene(t);
  await s.executor.rotate();
  await resumesAgain(t, s);
  t.equal(s.executor.generation, 2);
});

t.test(
  'a rotation whose candidate expired while the executor was away resumes with the old secret',
  async (t) => {
    const s = await scene(
      t,
      (executor) => executor.rotate().catch(() => {}),
      // The executor waits as long as the candidate lives, on the daemon's clock.
      (daemon) => ({ retryDelayMs: PROFILE_LIMITS.executor_rotation_timeout_ms, clock: daemon.clock }),
    );
    s.net.refusals = 1;
    loseRequest(s.net, 'executor.rotate_confirm');
    s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
    const turn = await s.session.startTurn('go', { executor: s.executor });
    await until(() => s.net.refused === 1, 'a reconnect to fail');
    await until(() => s.daemon.app.executors.attachmentOf(s.executor.id) === null, 'the executor to detach');
    const attempts = s.net.lines.length;
    s.daemon.clock.advance(PROFILE_LIMITS.executor_rotation_timeout_ms - 1);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(s.net.lines.length, attempts, 'the retry waits on the executor clock, not in real time');
    s.daemon.clock.advance(1);
    await ranOnceAndSettled(t, s, turn.accepted.turn_id);
    t.equal(s.net.refused, 1);
    s.net.beforeSend = () => true;
    await resumesAgain(t, s);
  },
);
