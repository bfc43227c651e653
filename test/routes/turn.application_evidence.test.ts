import t from 'tap';
import type { EventFrame } from '../../client/wire-client.js';
import { systemClock } from '../../core/clock.js';
import { OPERATION_RETENTION_MS, PROFILE_LIMITS } from '../../core/limits.js';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { type Controller, codeOf, resultOf, takeOver, until } from './session.resources.fixture.js';
import { applicationSession, heldLookupCall, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

const SECRET_ARGUMENT = 'argument-bytes-9c1e';
const SECRET_RESULT = 'result-bytes-4d2a';

function evidence(who: Controller, turnId: string) {
  return who.client.request(
    'turn.application_evidence',
    { turn_id: turnId },
    { session: who.session, control: who.control },
  );
}

interface Evidence {
  turn_id: string;
  application_manifest: unknown;
  calls: Array<Record<string, unknown>>;
}

for (const transport of TRANSPORTS) {
  t.test(`turn.application_evidence (${transport})`, async (t) => {
    t.test(
      'a call from dispatch to its reported result; reads renew nothing and show no bodies',
      async (t) => {
        const { daemon, provider } = await turnDaemon(t);
        const { who, executor, application } = await applicationSession(daemon, transport);
        provider
          .replyToolCalls([{ id: 'c1', name: 'lookup', arguments: `{"path":"${SECRET_ARGUMENT}"}` }])
          .reply(['ok']);
        const accepted = resultOf<{ turn_id: string; application_manifest: unknown }>(
          await startTurn(who, { prompt: 'go', application }),
        );
        const call = await who.client.event('turn.application_tool_call');
        const first = resultOf<Evidence>(await evidence(who, accepted.turn_id));
        t.same(first.application_manifest, accepted.application_manifest, 'the accepted manifest, unchanged');
        t.match(first.calls, [
          {
            call_id: call.payload.call_id,
            provider_call_id: 'c1',
            name: 'lookup',
            executor_id: executor.executor_id,
            executor_generation: 1,
            resource_id: call.payload.resource_id,
            revision_id: call.payload.revision_id,
            revision_sha256: call.payload.revision_sha256,
            status: 'pending',
            external_effects: 'uncertain',
            wait_kind: 'execution',
            remaining_ms: PROFILE_LIMITS.tool_timeout_ms_default,
          },
        ]);
        daemon.clock.advance(1_000);
        resultOf(await evidence(who, accepted.turn_id));
        daemon.clock.advance(500);
        const later = resultOf<Evidence>(await evidence(who, accepted.turn_id));
        t.equal(
          later.calls[0]?.remaining_ms,
          PROFILE_LIMITS.tool_timeout_ms_default - 1_500,
          'a read renews no deadline',
        );
        resultOf(
          await submitResult(who.client, who.session, executor, call, {
            outcome: { status: 'success', value: {} },
          }),
        );
        await who.client.event('turn.terminal');
        const settled = resultOf<Evidence>(await evidence(who, accepted.turn_id));
        t.match(settled.calls, [
          { status: 'succeeded', external_effects: 'reported', wait_kind: null, remaining_ms: null },
        ]);
        t.notMatch(JSON.stringify(settled), SECRET_ARGUMENT, 'no argument bytes');
        t.notMatch(JSON.stringify(settled), 'Answer briefly', 'no instructions');
      },
    );

    t.test('an error result is failed and reported; a timeout failed and uncertain', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
      provider.replyToolCalls([{ id: 'c2', name: 'lookup', arguments: '{"path":"b"}' }]);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      const call = await who.client.event('turn.application_tool_call');
      resultOf(
        await submitResult(who.client, who.session, executor, call, {
          outcome: {
            status: 'error',
            code: 'execution_failed',
            message: SECRET_RESULT,
          },
        }),
      );
      await who.client.event('turn.application_tool_call');
      daemon.clock.advance(PROFILE_LIMITS.tool_timeout_ms_default);
      await who.client.event('turn.terminal');
      const settled = resultOf<Evidence>(await evidence(who, accepted.turn_id));
      t.notMatch(JSON.stringify(settled), SECRET_RESULT, 'no result bytes');
      t.match(settled.calls, [
        { provider_call_id: 'c1', status: 'failed', external_effects: 'reported' },
        { provider_call_id: 'c2', status: 'failed', external_effects: 'uncertain', wait_kind: null },
      ]);
    });

    t.test('a call waiting for its executor, then failing availability, was never dispatched', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      const hold = heldLookupCall(provider);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      await hold.reached;
      who.client.close();
      await until(
        () => daemon.app.executors.attachmentOf(executor.executor_id) === null,
        'the executor to detach',
      );
      hold.release();
      await until(() => daemon.app.turns.pendingCalls(executor.executor_id).length === 1, 'the call to wait');
      const reader = await daemon.connect(transport);
      const claim = await reader.call('session.claim', {}, { session: who.session, operation: op() });
      const controller = { ...who, client: reader, control: claim.control_token as string };
      daemon.clock.advance(10_000);
      const waiting = resultOf<Evidence>(await evidence(controller, accepted.turn_id));
      t.match(waiting.calls, [
        {
          status: 'waiting_for_executor',
          external_effects: 'not_dispatched',
          wait_kind: 'availability',
          remaining_ms: PROFILE_LIMITS.executor_availability_timeout_ms - 10_000,
        },
      ]);
      daemon.clock.advance(PROFILE_LIMITS.executor_availability_timeout_ms - 10_000);
      const terminal = await reader.event('turn.terminal');
      t.match(terminal.payload, { status: 'failed', error: { code: 'executor_unavailable' } });
      const failed = resultOf<Evidence>(await evidence(controller, accepted.turn_id));
      t.match(failed.calls, [{ status: 'failed', external_effects: 'not_dispatched', wait_kind: null }]);
    });

    t.test('a stopped turn reports its dispatched call cancelled with uncertain effects', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      await who.client.event('turn.application_tool_call');
      resultOf(
        await who.client.request(
          'turn.stop',
          { turn_id: accepted.turn_id },
          { session: who.session, control: who.control, operation: op() },
        ),
      );
      await who.client.event('turn.terminal');
      const settled = resultOf<Evidence>(await evidence(who, accepted.turn_id));
      t.match(settled.calls, [
        { status: 'cancelled', external_effects: 'uncertain', wait_kind: null, remaining_ms: null },
      ]);
    });

    t.test(
      'settled evidence is kept 600 s after the terminal, reads or not, then unknown_turn',
      async (t) => {
        const { daemon, provider } = await turnDaemon(t);
        const { who, application } = await applicationSession(daemon, transport);
        provider.reply(['ok']);
        const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
        await who.client.event('turn.terminal');
        daemon.clock.advance(OPERATION_RETENTION_MS - 1);
        t.equal(codeOf(await evidence(who, accepted.turn_id)), 'ok', 'at 599,999 ms');
        daemon.clock.advance(1);
        t.equal(codeOf(await evidence(who, accepted.turn_id)), 'unknown_turn', 'gone at 600,000 ms');
      },
    );

    t.test('unknown, foreign and ordinary reads', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      const other = await applicationSession(daemon, transport);
      provider.reply(['ok']);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      await who.client.event('turn.terminal');
      t.equal(codeOf(await evidence(who, 'turn_unknown')), 'unknown_turn');
      t.equal(codeOf(await evidence(other.who, accepted.turn_id)), 'unknown_turn', 'another session');
      const wrongToken = await who.client.request(
        'turn.application_evidence',
        { turn_id: accepted.turn_id },
        { session: who.session, control: other.who.control },
      );
      t.equal(codeOf(wrongToken), 'unauthorized', 'control comes first');
      const plain = await daemon.connect(transport, []);
      const plainAnswer = await plain.request(
        'turn.application_evidence',
        { turn_id: accepted.turn_id },
        { session: who.session, control: who.control },
      );
      t.equal(codeOf(plainAnswer), 'unknown_method', 'ordinary connections cannot call it');
    });

    t.test('the 33rd call of a turn is refused without dispatch', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      const calls = Array.from({ length: PROFILE_LIMITS.calls_per_turn + 1 }, (_, i) => ({
        id: `c${i}`,
        name: 'lookup',
        arguments: '{"path":"a"}',
      }));
      provider.replyToolCalls(calls).reply(['ok']);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      const dispatched: EventFrame[] = [];
      for (let i = 0; i < PROFILE_LIMITS.calls_per_turn; i++) {
        dispatched.push(await who.client.event('turn.application_tool_call'));
      }
      const view = resultOf<Evidence>(await evidence(who, accepted.turn_id));
      t.equal(view.calls.length, PROFILE_LIMITS.calls_per_turn, 'the 32nd is admitted, the 33rd is not');
      for (const call of dispatched)
        resultOf(
          await submitResult(who.client, who.session, executor, call, {
            outcome: { status: 'success', value: {} },
          }),
        );
      await who.client.event('turn.terminal');
      await provider.nextRequest();
      const continuation = await provider.nextRequest();
      const last = (continuation.body as { messages: Array<{ content: string }> }).messages.at(-1);
      t.match(JSON.parse(last?.content ?? '{}'), { error: { code: 'call_limit' } });
    });
  });
}

t.test(
  'evidence and resume read remaining time from the real monotonic clock as whole milliseconds',
  async (t) => {
    for (const transport of TRANSPORTS) {
      const provider = await ScriptedProvider.start(t);
      const daemon = await startDaemon(t, {
        clock: systemClock,
        provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
      });
      const { who, executor, application } = await applicationSession(daemon, transport);
      const hold = heldLookupCall(provider);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      await hold.reached;
      // The executor leaves before the call is made, so it waits on the availability bound.
      who.client.close();
      const watcher = await takeOver(daemon, transport, who);
      await until(() => daemon.app.executors.attachmentOf(executor.executor_id) === null, 'the detach');
      hold.release();
      await until(() => daemon.app.turns.pendingCalls(executor.executor_id).length === 1, 'the call to wait');
      const waiting = await evidence(watcher, accepted.turn_id);
      t.equal(codeOf(waiting), 'ok', `${transport}: evidence of a waiting call answers`);
      const [call] = resultOf<Evidence>(waiting).calls;
      t.match(call, { status: 'waiting_for_executor', wait_kind: 'availability' });
      const remaining = call?.remaining_ms as number;
      t.ok(Number.isInteger(remaining), `${transport}: ${remaining} is whole milliseconds`);
      t.ok(remaining >= 1 && remaining <= PROFILE_LIMITS.executor_availability_timeout_ms);
      const again = await daemon.connect(transport);
      const resumed = await again.call(
        'executor.resume',
        { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
        { operation: op() },
      );
      const [pending] = resumed.pending_calls as Array<{ remaining_ms: number }>;
      t.ok(Number.isInteger(pending?.remaining_ms), 'pending_calls too');
      t.ok(
        (pending?.remaining_ms ?? 0) >= 1 && (pending?.remaining_ms ?? 0) <= remaining,
        'and never renewed',
      );
      const dispatched = await again.event('turn.application_tool_call');
      const execution = resultOf<Evidence>(await evidence(watcher, accepted.turn_id)).calls[0];
      t.match(execution, { status: 'pending', wait_kind: 'execution' });
      t.ok(Number.isInteger(execution?.remaining_ms), 'an execution wait too');
      t.ok(dispatched);
    }
  },
);

t.test('turns started at once never pass the evidence bound of 256 retained turns', async (t) => {
  const { daemon } = await turnDaemon(t);
  const extra = 32;
  const total = PROFILE_LIMITS.evidence_turns + extra;
  // Spread over connections so that no connection passes its own bound of requests in flight.
  const clients = await Promise.all(Array.from({ length: 4 }, () => daemon.connect('in-process')));
  const sessions = await Promise.all(
    Array.from({ length: total }, async (_, i) => {
      const client = clients[i % clients.length]!;
      const { session, control } = await claimedSession(client, daemon.workspace);
      return { client, session, control };
    }),
  );
  // Every turn is asked for before any acceptance is written: their user records are written together.
  const answers = await Promise.all(
    sessions.map(({ client, session, control }) =>
      client.request('turn.start', { prompt: 'go' }, { session, control, operation: op() }),
    ),
  );
  const codes = answers.map(codeOf);
  t.equal(codes.filter((code) => code === 'ok').length, PROFILE_LIMITS.evidence_turns, 'exactly the bound');
  t.equal(codes.filter((code) => code === 'limit_exceeded').length, extra, 'the rest refused');
  t.equal(daemon.app.evidence.size, PROFILE_LIMITS.evidence_turns, 'and never more retained');
});
