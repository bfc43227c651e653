import t from 'tap';
import { responsesRequestBody } from '../../../core/provider/responses/responses-request.js';
import { request } from './provider-fixture.js';

const body = (model: string, options: Parameters<typeof responsesRequestBody>[1]) =>
  responsesRequestBody(request({ selection: { model, reasoningEffort: null, fast: false } }), options);

t.test(
  'encrypted reasoning is asked for unless the provider or the model says it does not reason',
  async (t) => {
    t.same(body('o4-mini', { reasoningSummary: false }).include, ['reasoning.encrypted_content']);
    t.notOk('include' in body('o4-mini', { reasoningSummary: false, encryptedReasoning: false }));
    const byModel = { encryptedReasoning: true, modelOptions: { 'gpt-4o': { encryptedReasoning: false } } };
    t.notOk(
      'include' in body('gpt-4o', { reasoningSummary: false, ...byModel }),
      'gpt-4o refuses the member',
    );
    t.same(body('o3', { reasoningSummary: false, ...byModel }).include, ['reasoning.encrypted_content']);
  },
);

t.test('summaries are asked for by provider, unless the model says otherwise', async (t) => {
  const options = { reasoningSummary: true, modelOptions: { 'gpt-4o': { reasoningSummary: false } } };
  t.same(body('o3', options).reasoning, { summary: 'auto' });
  t.notOk('reasoning' in body('gpt-4o', options));
});

t.test('an earlier round without carried reasoning: its text, then its calls; results after', async (t) => {
  const sent = responsesRequestBody(
    request({
      messages: [
        { role: 'user', content: 'Q' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [{ id: 'call_1', name: 'f', arguments: 'not json' }],
        },
        { role: 'tool', toolCallId: 'call_1', content: 'R' },
        { role: 'assistant', content: 'A', toolCalls: [] },
      ],
    }),
    { reasoningSummary: false },
  );
  t.same(sent.input, [
    { role: 'user', content: 'Q' },
    { role: 'assistant', content: 'Looking.' },
    { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'R' },
    { role: 'assistant', content: 'A' },
  ]);
  t.notOk('instructions' in sent);
});
