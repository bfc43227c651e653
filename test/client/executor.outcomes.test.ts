import { once } from 'node:events';
import type { Test } from 'tap';
import t from 'tap';
import type { ApplicationExecutor } from '../../client/executor.js';
import { ExecutorLostError, ToolFailure, type ToolHandler } from '../../client/executor-types.js';
import { FIFTEEN_MINUTES, until } from '../routes/session.resources.fixture.js';
import { type LookupSession, lookupSession } from './lookup-session.js';

interface Scene extends LookupSession {
  executor: ApplicationExecutor;
}

/** A session with the `lookup` tool (`{}` out) and an executor running `handlers`. */
async function scene(t: Test, handlers: Record<string, ToolHandler>): Promise<Scene> {
  const { daemon, provider, net, client, session } = await lookupSession(t);
  const executor = await client.startExecutor(handlers, { retryDelayMs: 1 });
  t.teardown(() => executor.close());
  return { daemon, provider, net, client, session, executor };
}

/** Runs a turn whose model calls `lookup` once; the tool message the model got back, and the evidence. */
async function callOnce(s: Scene): Promise<{ toolMessage: unknown; status: string; state: string }> {
  s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
  const turn = await s.session.startTurn('go', { executor: s.executor });
  for await (const _ of turn.events);
  const evidence = await s.session.evidence(turn.accepted.turn_id);
  await s.provider.nextRequest();
  const continuation = await s.provider.nextRequest();
  const call = evidence.calls[0]!;
  return {
    toolMessage: JSON.parse(continuation.body.messages.at(-1).content),
    status: call.status,
    state: await s.executor.settled(call.call_id),
  };
}

t.test('a ToolFailure reaches the model as the error outcome it names', async (t) => {
  const s = await scene(t, {
    lookup: () => {
      throw new ToolFailure('permission_denied', 'not your notes');
    },
  });
  t.same(await callOnce(s), {
    toolMessage: { error: { code: 'permission_denied', message: 'not your notes' } },
    status: 'failed',
    state: 'accepted',
  });
});

t.test("any other failure of a handler is reported with fixed text, never the error's own", async (t) => {
  const s = await scene(t, {
    lookup: () => {
      throw new Error('/home/me/secret.txt: permission denied');
    },
  });
  t.same(await callOnce(s), {
    toolMessage: { error: { code: 'execution_failed', message: 'the tool failed' } },
    status: 'failed',
    state: 'accepted',
  });
});

t.test('a tool without a handler is answered execution_failed', async (t) => {
  const s = await scene(t, {});
  t.match(await callOnce(s), {
    toolMessage: {
      error: { code: 'execution_failed', message: 'the application has no handler for this tool' },
    },
    status: 'failed',
  });
});

t.test(
  'a value outside the output schema is refused, replaced by an error outcome and reported',
  async (t) => {
    let runs = 0;
    const s = await scene(t, {
      lookup: () => {
        runs++;
        return { unexpected: true };
      },
    });
    const refusals: unknown[] = [];
    s.executor.on('result_refused', (call) => refusals.push(call));
    t.match(await callOnce(s), {
      toolMessage: { error: { code: 'execution_failed' } },
      status: 'failed',
      state: 'refused',
    });
    t.equal(runs, 1, 'the handler was not run again');
    t.match(refusals, [{ callId: /\S/, name: 'lookup' }], 'the application is told which call');
  },
);

t.test('a stopped turn aborts the running handler; its late result is not accepted', async (t) => {
  let started: () => void = () => {};
  const running = new Promise<void>((resolve) => (started = resolve));
  let reason: unknown = null;
  const s = await scene(t, {
    lookup: (_args, call) =>
      new Promise((resolve) => {
        started();
        call.signal.addEventListener('abort', () => {
          reason = call.signal.reason;
          resolve({});
        });
      }),
  });
  s.provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
  const turn = await s.session.startTurn('go', { executor: s.executor });
  await running;
  await s.session.stopTurn(turn.accepted.turn_id);
  let status = '';
  for await (const event of turn.events) if (event.event === 'turn.terminal') status = event.payload.status;
  t.equal(status, 'cancelled');
  t.equal(reason, 'cancelled', 'the handler saw the cancellation');
  const [callId] = [...s.executor.calls.keys()];
  t.equal(await s.executor.settled(callId!), 'not_accepted');
  const evidence = await s.session.evidence(turn.accepted.turn_id);
  t.match(evidence.calls, [{ status: 'cancelled', external_effects: 'uncertain' }]);
});

t.test('an executor that expired while away is reported lost, not retried forever', async (t) => {
  const s = await scene(t, {});
  let reopen: () => void = () => {};
  s.net.gate = new Promise((resolve) => (reopen = resolve));
  s.net.current.cut();
  await until(() => s.daemon.app.executors.attachmentOf(s.executor.id) === null, 'the executor to detach');
  s.daemon.clock.advance(FIFTEEN_MINUTES);
  reopen();
  const lost = once(s.executor, 'lost');
  await until(() => s.executor.lost !== null, 'the executor to be lost');
  t.ok(s.executor.lost instanceof ExecutorLostError);
  t.same(await lost, [s.executor.lost], 'and says so with an event');
  const attempts = s.net.lines.length;
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(s.net.lines.length, attempts, 'no further reconnects');
});
