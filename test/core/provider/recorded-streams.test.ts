import t from 'tap';
import { ProviderError } from '../../../core/provider/provider-error.js';
import { RECORDED_ANSWER, recorded, recording } from '../../helpers/recorded-streams.js';
import {
  anthropicMessage,
  anthropicStatus,
  openAiChatCompletion,
  openAiResponseEvents,
} from '../../helpers/sdk-oracle.js';
import { APIS, apiFixture } from './api-fixture.js';

/**
 * Streams llama.cpp's own llama-server sent (a real implementation of all three APIs, recorded by
 * `npm run record:providers`), replayed to each adapter: the answer, the forced call, the continuation
 * after a call's result and a refusal, as the daemon reads them and as the official SDKs read them.
 */

const PATHS = {
  chat_completions: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
};

for (const api of APIS) {
  t.test(`${api}: the recorded text answer`, async (t) => {
    const { server, run, events } = await apiFixture(t, api);
    server.script(recorded(api, 'text'));
    const round = await run();
    t.equal(round.text, RECORDED_ANSWER);
    t.same(round.toolCalls, []);
    t.equal(round.finishReason, api === 'messages' ? 'end_turn' : 'stop');
    t.notOk(round.carry, 'nothing to carry');
    t.equal(
      events.map((event) => (event.kind === 'text' ? event.delta : '')).join(''),
      RECORDED_ANSWER,
      'streamed as it came',
    );
    t.equal(server.requests[0]?.path, PATHS[api]);
  });

  t.test(`${api}: the recorded forced call`, async (t) => {
    const { server, run, events } = await apiFixture(t, api);
    server.script(recorded(api, 'tool-call'));
    const round = await run();
    t.equal(round.toolCalls.length, 1);
    t.match(round.toolCalls[0], { name: 'get_weather', arguments: '{"location":"Paris"}' });
    t.ok((round.toolCalls[0]?.id.length ?? 0) > 0);
    t.equal(round.text, '');
    t.ok(events.some((event) => event.kind === 'tool_call_started'));
  });

  t.test(`${api}: the recorded continuation after a call's result`, async (t) => {
    const { server, run } = await apiFixture(t, api);
    server.script(recorded(api, 'tool-result'));
    t.equal((await run()).text, RECORDED_ANSWER);
    t.equal(
      recording(api, 'tool-result').response.status,
      200,
      'the server took the replayed call and result',
    );
  });

  t.test(`${api}: the recorded refusal is an HTTP error, not retried, in the daemon's words`, async (t) => {
    const { server, run, retries } = await apiFixture(t, api);
    server.script(recorded(api, 'error'));
    const error = await run().then(
      () => null,
      (failure: unknown) => failure,
    );
    t.type(error, ProviderError);
    t.match(error, { kind: 'http_status', status: 400 });
    t.notMatch(String((error as Error).message), 'context', "the server's words are not repeated");
    t.equal(retries.length, 0);
  });
}

t.test('the official SDKs read the recordings as the daemon does', async (t) => {
  const chat = await openAiChatCompletion(recorded('chat_completions', 'text'));
  t.equal(chat.choices[0]?.message.content, RECORDED_ANSWER);
  const chatCall = await openAiChatCompletion(recorded('chat_completions', 'tool-call'));
  t.match(chatCall.choices[0]?.message.tool_calls?.[0], {
    function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
  });

  const responseEvents = await openAiResponseEvents(recorded('responses', 'text'));
  const text = responseEvents.flatMap((event) =>
    event.type === 'response.output_text.delta' ? [event.delta] : [],
  );
  t.equal(text.join(''), RECORDED_ANSWER);
  t.equal(responseEvents.at(-1)?.type, 'response.completed');
  const callEvents = await openAiResponseEvents(recorded('responses', 'tool-call'));
  const done = callEvents.find((event) => event.type === 'response.output_item.done');
  t.match(done, { item: { type: 'function_call', name: 'get_weather', arguments: '{"location":"Paris"}' } });

  const message = await anthropicMessage(recorded('messages', 'text'));
  t.match(message.content, [{ type: 'text', text: RECORDED_ANSWER }]);
  t.equal(message.stop_reason, 'end_turn');
  const toolUse = await anthropicMessage(recorded('messages', 'tool-call'));
  t.match(toolUse.content, [{ type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } }]);
  t.equal(await anthropicStatus(recorded('messages', 'error')), 400);
});
