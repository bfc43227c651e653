import t from 'tap';
import { PROVIDER_LIMITS } from '../../../core/limits.js';

/**
 * The raw stream's bound is derived from the framing real providers put around each fragment of a few
 * characters. Each event here is shaped as the provider streams it (OpenAI's Chat Completions chunk and
 * Responses event with their ids, fingerprint and obfuscation padding, Anthropic's Messages event), around
 * five characters of arguments.
 */
const FRAGMENT = '\\"\\"\\"'.slice(0, 5);

const EVENTS = {
  chat_completions: `data: ${JSON.stringify({
    id: 'chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0',
    object: 'chat.completion.chunk',
    created: 1_770_933_892,
    model: 'gpt-4.1-nano-2025-04-14',
    service_tier: 'default',
    system_fingerprint: 'fp_de604bd877',
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, function: { arguments: FRAGMENT } }] },
        logprobs: null,
        finish_reason: null,
      },
    ],
    usage: null,
    obfuscation: 'Qup1BsQ3',
  })}\n\n`,
  responses: `event: response.function_call_arguments.delta\ndata: ${JSON.stringify({
    type: 'response.function_call_arguments.delta',
    delta: FRAGMENT,
    item_id: 'fc_0775572d10a16b66006a8d8528e8a887d2a32ef76463d40c98',
    obfuscation: 'H2d0mf8T42i5Ya',
    output_index: 0,
    sequence_number: 3,
  })}\n\n`,
  messages: `event: content_block_delta\ndata: ${JSON.stringify({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'input_json_delta', partial_json: FRAGMENT },
  })}\n\n`,
};

t.test('the framing of one fragment, by API, and the raw bound derived from the worst', async (t) => {
  const bytes = Object.fromEntries(
    Object.entries(EVENTS).map(([api, event]) => [api, Buffer.byteLength(event)]),
  ) as Record<keyof typeof EVENTS, number>;
  t.same(bytes, { chat_completions: 379, responses: 258, messages: 139 });
  const worst = Math.max(...Object.values(bytes));
  t.ok(worst <= 384);
  const kept = PROVIDER_LIMITS.round_argument_bytes + PROVIDER_LIMITS.text_bytes;
  const derived = (kept / 4) * 384;
  t.equal(derived, 792 * 1024 * 1024, 'what a round keeps, in four-character fragments at 384 bytes each');
  t.ok(PROVIDER_LIMITS.response_bytes >= derived, 'the bound is that, rounded up');
});
