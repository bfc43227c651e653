import t from 'tap';
import { TRANSPORTS } from '../helpers/daemon.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { applicationSession, applicationTools, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`turn.start (${transport})`, async (t) => {
    t.test('an ordinary turn streams the answer and ends with one completed terminal', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      provider.reply(['Hel', 'lo']);
      const who = await controller(daemon, transport);
      const accepted = resultOf<{ turn_id: string; status: string; application_manifest: unknown }>(
        await startTurn(who, { prompt: 'Say hello' }),
      );
      t.equal(accepted.status, 'accepted');
      t.equal(accepted.application_manifest, null, 'a selected turn without application reports null');
      const started = await who.client.event('turn.started');
      t.equal(started.sequence, 0);
      t.same(started.payload, { turn_id: accepted.turn_id });
      const first = await who.client.event('turn.assistant_delta');
      const second = await who.client.event('turn.assistant_delta');
      t.same([first.payload.delta, second.payload.delta], ['Hel', 'lo']);
      t.ok((second.sequence as number) > (first.sequence as number));
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, {
        turn_id: accepted.turn_id,
        status: 'completed',
        error: null,
        assistant_text: 'Hello',
        activity_dropped: 0,
        application_manifest: null,
      });
      const request = await provider.nextRequest();
      t.same(
        (request.body as { messages: unknown[] }).messages,
        [{ role: 'user', content: 'Say hello' }],
        'an ordinary turn sends the prompt alone',
      );
    });

    t.test('a later turn sees the earlier completed exchanges of its session', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      provider.reply(['first answer']).replyStatus(400);
      provider.reply(['third answer']);
      const who = await controller(daemon, transport);
      resultOf(await startTurn(who, { prompt: 'first question' }));
      await who.client.event('turn.terminal');
      resultOf(await startTurn(who, { prompt: 'failing question' }));
      t.match((await who.client.event('turn.terminal')).payload, { status: 'failed' });
      resultOf(await startTurn(who, { prompt: 'third question' }));
      t.match((await who.client.event('turn.terminal')).payload, {
        status: 'completed',
        assistant_text: 'third answer',
      });
      const last = provider.requests.at(-1)?.body as { messages: unknown[] } | undefined;
      t.same(
        last?.messages,
        [
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: 'third question' },
        ],
        'the failed turn is not part of the conversation',
      );
    });

    t.test('without a provider the turn is refused before acceptance', async (t) => {
      const { startDaemon } = await import('../helpers/daemon.js');
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      t.equal(codeOf(await startTurn(who, { prompt: 'hi' })), 'provider_unavailable');
    });

    t.test('an application tool is called once through the executor and the turn continues', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'call-1', name: 'lookup', arguments: '{"path":"notes.md"}' }]);
      provider.reply(['Found ', 'it.']);
      const accepted = resultOf<{ turn_id: string; application_manifest: Record<string, unknown> }>(
        await startTurn(who, { prompt: 'Find my notes', application }),
      );
      t.match(accepted.application_manifest, {
        profile: 'application_resources_v1',
        tools: [{ name: 'lookup' }],
        accepted_executor: { executor_id: executor.executor_id, executor_generation: 1 },
      });
      const call = await who.client.event('turn.application_tool_call');
      t.same(
        [call.operation_id, call.grant_generation, call.sequence],
        [null, null, null],
        'callback events are outside the session sequence',
      );
      t.same(call.payload.arguments, { path: 'notes.md' });
      const first = await provider.nextRequest();
      t.match(first.body, {
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: 'Find my notes' },
        ],
      });
      t.match(applicationTools(first.body), [{ type: 'function', function: { name: 'lookup' } }]);
      const ack = await submitResult(who.client, who.session, executor, call);
      t.same(resultOf(ack), { call_id: call.payload.call_id, status: 'accepted' });
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'completed', assistant_text: 'Found it.' });
      const second = await provider.nextRequest();
      const messages = (second.body as { messages: Array<Record<string, unknown>> }).messages;
      t.match(messages.at(-1), { role: 'tool', tool_call_id: 'call-1', content: '{}' });
      const again = await submitResult(who.client, who.session, executor, call);
      t.equal(codeOf(again), 'unknown_turn', 'a settled call takes no second result');
    });
  });
}
