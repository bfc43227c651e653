import t from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { PROFILE_LIMITS } from '../../core/limits.js';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { codeOf, resultOf, until } from './session.resources.fixture.js';
import {
  applicationSession,
  eventCount,
  heldLookupCall,
  startTurn,
  submitResult,
  turnDaemon,
} from './turn.fixture.js';

const callEvents = (client: WireClient) => eventCount(client, 'turn.application_tool_call');

const settle = () => new Promise((resolve) => setImmediate(resolve));

for (const transport of TRANSPORTS) {
  t.test(`application callbacks (${transport})`, async (t) => {
    t.test('invalid results leave the call pending; stale authority is stale_connection', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['ok']);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const call = await who.client.event('turn.application_tool_call');
      t.equal(
        codeOf(await submitResult(who.client, who.session, executor, call, { revision_id: 'rev_other' })),
        'invalid_payload',
      );
      t.equal(
        codeOf(
          await submitResult(who.client, who.session, executor, call, {
            outcome: { status: 'success', value: { extra: true } },
          }),
        ),
        'invalid_payload',
        'a value outside the output schema',
      );
      t.equal(
        codeOf(
          await submitResult(who.client, who.session, executor, call, {
            outcome: {
              status: 'error',
              code: 'execution_failed',
              message: 'x'.repeat(PROFILE_LIMITS.error_message_bytes + 1),
            },
          }),
        ),
        'invalid_payload',
        'an error message over 512 bytes',
      );
      t.equal(
        codeOf(await submitResult(who.client, who.session, executor, call, { executor_generation: 2 })),
        'stale_connection',
      );
      t.equal(
        codeOf(await submitResult(who.client, who.session, executor, call, { call_id: 'call_unknown' })),
        'unknown_turn',
      );
      t.equal(
        codeOf(
          await submitResult(who.client, who.session, executor, call, {
            outcome: { status: 'error', code: 'permission_denied', message: 'not allowed' },
          }),
        ),
        'ok',
        'the call was still pending',
      );
      const terminal = await who.client.event('turn.terminal');
      t.equal(terminal.payload.status, 'completed');
      await provider.nextRequest();
      const continuation = await provider.nextRequest();
      const last = (continuation.body as { messages: Array<Record<string, unknown>> }).messages.at(-1);
      t.same(
        JSON.parse(last?.content as string),
        {
          error: { code: 'permission_denied', message: 'not allowed' },
        },
        'an error outcome reaches the model marked as an error',
      );
    });

    t.test('an executor reconciles a lost result acknowledgment without the session control', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['ok']);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const call = await who.client.event('turn.application_tool_call');
      const operation = op();
      const submitted = await submitResult(who.client, who.session, executor, call, {}, operation);
      t.equal(codeOf(submitted), 'ok');
      const elsewhere = await daemon.connect(transport);
      const lookup = await elsewhere.call('operation.lookup', { operation_id: operation }, {});
      t.match(lookup, {
        method: 'turn.application_tool_result',
        status: 'completed',
        result: { call_id: call.payload.call_id, status: 'accepted' },
      });
    });

    t.test('arguments outside the input schema go back to the model, never to the executor', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":1}' }]).reply(['sorry']);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const terminal = await who.client.event('turn.terminal');
      t.equal(terminal.payload.status, 'completed');
      t.equal(callEvents(who.client), 0, 'nothing dispatched');
      await provider.nextRequest();
      const continuation = await provider.nextRequest();
      const last = (continuation.body as { messages: Array<Record<string, unknown>> }).messages.at(-1);
      t.match(JSON.parse(last?.content as string), { error: { code: 'invalid_arguments' } });
    });

    t.test('a call past its timeout fails the turn with tool_timeout', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const call = await who.client.event('turn.application_tool_call');
      daemon.clock.advance(PROFILE_LIMITS.tool_timeout_ms_default - 1);
      await settle();
      t.equal(daemon.app.turns.activeCount, 1, 'still running 1 ms before the timeout');
      daemon.clock.advance(1);
      const cancel = await who.client.event('turn.application_tool_cancel');
      t.same(cancel.payload, {
        turn_id: call.payload.turn_id,
        call_id: call.payload.call_id,
        reason: 'tool_timeout',
      });
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'failed', error: { code: 'tool_timeout' } });
    });

    t.test('turn.stop cancels the turn and the call; the provider request is aborted', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      await who.client.event('turn.application_tool_call');
      const stopped = await who.client.request(
        'turn.stop',
        { turn_id: accepted.turn_id },
        { session: who.session, control: who.control, operation: op() },
      );
      t.same(resultOf(stopped), { turn_id: accepted.turn_id, status: 'cancelling' });
      const cancel = await who.client.event('turn.application_tool_cancel');
      t.equal(cancel.payload.reason, 'cancelled');
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'cancelled', error: null });
      const again = await who.client.request(
        'turn.stop',
        { turn_id: accepted.turn_id },
        { session: who.session, control: who.control, operation: op() },
      );
      t.equal(codeOf(again), 'unknown_turn');
    });

    t.test(
      'an executor that drops mid-call resumes and submits its retained result with the new generation',
      async (t) => {
        const { daemon, provider } = await turnDaemon(t);
        const { who, executor, application } = await applicationSession(daemon, transport);
        provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['done']);
        const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
        const call = await who.client.event('turn.application_tool_call');
        who.client.close();
        const again = await daemon.connect(transport);
        const resumed = await again.call(
          'executor.resume',
          { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
          { operation: op() },
        );
        t.equal(resumed.executor_generation, 2);
        const pending = resumed.pending_calls as Array<Record<string, unknown>>;
        t.match(pending, [
          {
            session_id: who.session,
            turn_id: accepted.turn_id,
            call_id: call.payload.call_id,
            status: 'pending',
            wait_kind: 'execution',
          },
        ]);
        const claim = await again.call('session.claim', {}, { session: who.session, operation: op() });
        t.match(claim.snapshot, { turn: { turn_id: accepted.turn_id, status: 'running' } });
        // Everything the result's envelope and payload need comes from the resume alone.
        const [entry] = pending;
        const ack = await submitResult(
          again,
          String(entry?.session_id),
          executor,
          { payload: entry } as never,
          {
            executor_generation: 2,
          },
        );
        t.equal(codeOf(ack), 'ok');
        const terminal = await again.event('turn.terminal');
        t.equal(terminal.payload.status, 'completed');
        t.equal(callEvents(again), 0, 'the call was never dispatched again');
      },
    );

    t.test(
      'a call waits at most 60 s for an absent executor, and is dispatched once it returns',
      async (t) => {
        const { daemon, provider } = await turnDaemon(t);
        const { who, executor, application } = await applicationSession(daemon, transport);
        const hold = heldLookupCall(provider);
        provider.reply(['done']);
        resultOf(await startTurn(who, { prompt: 'go', application }));
        await hold.reached;
        who.client.close();
        await until(
          () => daemon.app.executors.attachmentOf(executor.executor_id) === null,
          'the executor to detach',
        );
        hold.release();
        await until(
          () => daemon.app.turns.pendingCalls(executor.executor_id).length === 1,
          'the call to wait',
        );
        daemon.clock.advance(PROFILE_LIMITS.executor_availability_timeout_ms - 1);
        const again = await daemon.connect(transport);
        const resumed = await again.call(
          'executor.resume',
          { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
          { operation: op() },
        );
        t.match(resumed.pending_calls, [
          { status: 'waiting_for_executor', wait_kind: 'availability', remaining_ms: 1 },
        ]);
        const call = await again.event('turn.application_tool_call');
        t.equal(call.payload.executor_generation, 2, 'dispatched to the new attachment, at its generation');
      },
    );
  });
}
