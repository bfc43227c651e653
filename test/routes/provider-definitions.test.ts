import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { TITLE_INSTRUCTION } from '../../core/sessions/title-text.js';
import { claimedSession, op, startDaemon } from '../helpers/daemon.js';
import { messageEnd, messageStart, messagesText, textBlock } from '../helpers/messages-streams.js';
import { stream } from '../helpers/provider-streams.js';
import { ResponsesStream } from '../helpers/responses-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { listing } from './catalog.fixture.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

const OPENAI_KEY = 'sk-openai-env-7d1e';
const ANTHROPIC_KEY = 'sk-ant-stored-42aa';

/**
 * A daemon with the provider section (Chat Completions, `--provider-base-url`) and two named providers:
 * `openai` over the Responses API, its key in the environment, and `anthropic` over the Messages API.
 */
async function definitionsDaemon(t: Test, extra: Record<string, unknown> = {}) {
  const section = await ScriptedProvider.start(t);
  const openai = await ScriptedProvider.start(t);
  const anthropic = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: {
      baseUrl: section.baseUrl,
      model: null,
      apiKey: null,
      environment: { TEST_OPENAI_KEY: OPENAI_KEY },
    },
    config: {
      providers: {
        openai: { api: 'responses', base_url: openai.baseUrl, api_key_env: 'TEST_OPENAI_KEY' },
        anthropic: { api: 'messages', base_url: anthropic.baseUrl, max_tokens: 1_024 },
      },
      ...extra,
    },
  });
  return { daemon, section, openai, anthropic };
}

t.test('auth: each provider its own credential, reported apart; a named key stored apart', async (t) => {
  const { daemon, anthropic } = await definitionsDaemon(t);
  const client = await daemon.connect('in-process');
  t.same(await client.call('auth.status'), {
    ready: false,
    method: null,
    providers: [
      { name: 'openai', ready: true, method: 'env' },
      { name: 'anthropic', ready: false, method: null },
    ],
  });
  t.same(
    await client.call(
      'auth.login',
      { method: 'api_key', api_key: ANTHROPIC_KEY, provider: 'anthropic' },
      { operation: op() },
    ),
    { ready: true, method: 'stored' },
  );
  t.match(await client.call('auth.status'), {
    ready: false,
    providers: [{ name: 'openai' }, { name: 'anthropic', ready: true, method: 'stored' }],
  });
  t.notOk(existsSync(join(daemon.home, 'credentials.json')), "the section's credential is untouched");
  t.match(JSON.parse(readFileSync(join(daemon.home, 'provider-keys.json'), 'utf8')), {
    providers: { anthropic: { api_key: ANTHROPIC_KEY } },
  });

  anthropic.script(messagesText(['Hi']));
  await daemon.app.chatProvider!.complete(
    {
      selection: { model: 'anthropic/claude-test', reasoningEffort: null, fast: false },
      system: null,
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [],
      signal: new AbortController().signal,
    },
    () => {},
  );
  t.match(anthropic.requests[0]!.headers, { 'x-api-key': ANTHROPIC_KEY });
  t.equal(anthropic.requests[0]!.body.model, 'claude-test', 'the model without its provider name');

  const unknown = await client.request(
    'auth.login',
    { method: 'api_key', api_key: 'k', provider: 'nope' },
    { operation: op() },
  );
  t.equal(codeOf(unknown), 'conflict');
  const oauth = await client.request(
    'auth.login',
    { method: 'oauth', provider: 'openai' },
    { operation: op() },
  );
  t.equal(codeOf(oauth), 'conflict', 'named providers take keys, not OAuth');
  t.match(await client.call('auth.logout', { provider: 'anthropic' }, { operation: op() }), {
    removed: true,
    ready: false,
    method: null,
  });
  t.notOk(existsSync(join(daemon.home, 'provider-keys.json')));
  t.notMatch(client.received.join('\n'), ANTHROPIC_KEY, 'no key echoed');
  t.notMatch(client.received.join('\n'), OPENAI_KEY);
});

t.test('catalog.refresh lists every provider; a failed one keeps its models and is named', async (t) => {
  const { daemon, section, openai, anthropic } = await definitionsDaemon(t);
  const client = await daemon.connect('in-process');
  section.replyModels(listing(['gpt-local']));
  openai.replyModels(listing(['o4-mini']));
  anthropic.replyModels({
    data: [{ type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude' }],
    has_more: false,
  });
  const first = await client.call('catalog.refresh', {}, { operation: op() });
  t.same(first.models, [
    { id: 'gpt-local', owned_by: 'lab' },
    { id: 'openai/o4-mini', owned_by: 'lab', provider: 'openai' },
    { id: 'anthropic/claude-sonnet-4-5', owned_by: null, provider: 'anthropic' },
  ]);
  t.notOk('failed' in first);
  t.equal(openai.requests[0]?.headers.authorization, `Bearer ${OPENAI_KEY}`);
  t.match(anthropic.requests[0]?.headers, { 'anthropic-version': '2023-06-01', accept: 'application/json' });

  section.replyModels(listing(['gpt-local-2']));
  openai.replyModels({ error: 'down' }, 503);
  anthropic.replyModels(listing([]));
  const second = await client.call('catalog.refresh', {}, { operation: op() });
  t.same(second.models, [
    { id: 'gpt-local-2', owned_by: 'lab' },
    { id: 'openai/o4-mini', owned_by: 'lab', provider: 'openai' },
  ]);
  t.same(second.failed, ['openai']);
  t.same((await client.call('catalog.list')).models, second.models);

  for (const server of [section, openai, anthropic]) server.replyModels({}, 500);
  const none = await client.request('catalog.refresh', {}, { operation: op() });
  t.equal(codeOf(none), 'provider_error');
  t.same((await client.call('catalog.list')).models, second.models, 'nothing changed');
});

t.test('a model selected as NAME/model runs its turns on that provider', async (t) => {
  const { daemon, section, anthropic } = await definitionsDaemon(t);
  const client = await daemon.connect('in-process');
  section.replyModels(listing(['gpt-local']));
  anthropic.replyModels(listing(['claude-test']));
  await client.call('catalog.refresh', {}, { operation: op() });
  const refused = await client.request(
    'settings.update',
    { workspace: null, changes: { model: 'anthropic/unlisted' } },
    { operation: op() },
  );
  t.equal(codeOf(refused), 'conflict', 'checked against the catalog under its name');
  await client.call(
    'settings.update',
    { workspace: null, changes: { model: 'anthropic/claude-test' } },
    { operation: op() },
  );
  t.match(await client.call('status'), {
    ready: true,
    provider: { kind: 'anthropic_messages', model: 'anthropic/claude-test', configured: true },
    providers: [
      { name: 'openai', kind: 'openai_responses', default: false, auth: { ready: true, method: 'env' } },
      { name: 'anthropic', kind: 'anthropic_messages', default: false, auth: { ready: false } },
    ],
  });
  anthropic.script(messagesText(['From Messages.']));
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Hello?' }));
  t.match((await who.client.event('turn.terminal')).payload, {
    status: 'completed',
    assistant_text: 'From Messages.',
  });
  t.equal(anthropic.requests.at(-1)?.path, '/v1/messages');
  t.equal(section.requests.filter((request) => request.method === 'POST').length, 0);
});

t.test('a named default provider serves bare model names', async (t) => {
  const { daemon, openai } = await definitionsDaemon(t, { default_provider: 'openai' });
  const client = await daemon.connect('in-process');
  openai.replyModels(listing(['o4-mini']));
  await client.call('catalog.refresh', {}, { operation: op() });
  await client.call(
    'settings.update',
    { workspace: null, changes: { model: 'o4-mini' } },
    { operation: op() },
  );
  t.match(await client.call('auth.status'), { ready: true, method: 'env' }, "the default's credential first");
  t.match(await client.call('status'), {
    ready: true,
    provider: { kind: 'openai_responses', model: 'o4-mini' },
  });
  openai.script(new ResponsesStream().created().message('msg_1', ['From Responses.']).completed());
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Hello?' }));
  t.match((await who.client.event('turn.terminal')).payload, {
    status: 'completed',
    assistant_text: 'From Responses.',
  });
  t.match(openai.requests.at(-1), { path: '/v1/responses', body: { model: 'o4-mini' } });
});

t.test('without a default provider, a model that names none is not configured', async (t) => {
  const openai = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: null, model: 'gpt-4o', apiKey: null },
    config: { providers: { openai: { api: 'responses', base_url: openai.baseUrl } } },
  });
  const client = await daemon.connect('in-process');
  t.match(await client.call('status'), { ready: false, provider: { model: 'gpt-4o', configured: false } });
  const who = await controller(daemon, 'in-process');
  t.equal(codeOf(await startTurn(who, { prompt: 'Hello?' })), 'provider_unavailable');
  t.equal(openai.requests.length, 0);
});

t.test('history replays the same whatever API ran the turn', async (t) => {
  const { daemon, section, openai, anthropic } = await definitionsDaemon(t);
  const client = await daemon.connect('in-process');
  section.replyModels(listing(['gpt-local']));
  openai.replyModels(listing(['o4-mini']));
  anthropic.replyModels(listing(['claude-test']));
  await client.call('catalog.refresh', {}, { operation: op() });
  const who = await controller(daemon, 'in-process');
  const turns: Array<[string, () => void]> = [
    ['anthropic/claude-test', () => anthropic.script(messagesText(['First, from Messages.']))],
    [
      'openai/o4-mini',
      () => openai.script(new ResponsesStream().created().message('m', ['Second.']).completed()),
    ],
    ['gpt-local', () => section.reply(['Third.'])],
  ];
  for (const [model, script] of turns) {
    await client.call('settings.update', { workspace: null, changes: { model } }, { operation: op() });
    script();
    resultOf(await startTurn(who, { prompt: `Ask ${model}` }));
    t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
  }
  t.same(openai.requests.at(-1)!.body.input, [
    { role: 'user', content: 'Ask anthropic/claude-test' },
    { role: 'assistant', content: 'First, from Messages.' },
    { role: 'user', content: 'Ask openai/o4-mini' },
  ]);
  const chat = section.requests.filter((request) => request.method === 'POST').at(-1)!;
  t.match(chat.body.messages, [
    { role: 'user', content: 'Ask anthropic/claude-test' },
    { role: 'assistant', content: 'First, from Messages.' },
    { role: 'user', content: 'Ask openai/o4-mini' },
    { role: 'assistant', content: 'Second.' },
    { role: 'user', content: 'Ask gpt-local' },
  ]);
});

t.test(
  'a session is titled by the provider that ran its first turn, over Messages and Responses',
  async (t) => {
    const { daemon, openai, anthropic } = await definitionsDaemon(t);
    const client = await daemon.connect('in-process');
    openai.replyModels(listing(['o4-mini']));
    anthropic.replyModels(listing(['claude-test']));
    await client.call('catalog.refresh', {}, { operation: op() });
    const cases: Array<[string, ScriptedProvider, () => void, (body: Record<string, unknown>) => unknown]> = [
      [
        'anthropic/claude-test',
        anthropic,
        () => anthropic.script(messagesText(['Answer.'])).script(messagesText(['Tea by Messages'])),
        (body) => body.system,
      ],
      [
        'openai/o4-mini',
        openai,
        () =>
          openai
            .script(new ResponsesStream().created().message('m', ['Answer.']).completed())
            .script(new ResponsesStream().created().message('t', ['Tea by Responses']).completed()),
        (body) => body.instructions,
      ],
    ];
    for (const [model, server, script, instructionsOf] of cases) {
      await client.call('settings.update', { workspace: null, changes: { model } }, { operation: op() });
      script();
      const { session, control } = await claimedSession(client, daemon.workspace, null);
      await client.call('turn.start', { prompt: 'Where is the tea?' }, { session, control, operation: op() });
      await client.event('turn.terminal');
      // The title is stored once its answer is read: wait until it is listed.
      let listed: Record<string, unknown> | undefined;
      while (typeof listed?.title !== 'string') {
        await new Promise((resolve) => setImmediate(resolve));
        const page = await client.call('session.list', { cursor: null, limit: 100 });
        listed = (page.sessions as Array<Record<string, unknown>>).find(
          (entry) => entry.session_id === session,
        );
      }
      t.equal(listed.title, model.startsWith('anthropic') ? 'Tea by Messages' : 'Tea by Responses');
      const title = server.requests.filter((request) => request.method === 'POST').at(-1)!;
      t.equal(instructionsOf(title.body), TITLE_INSTRUCTION, `${model}: the title instruction`);
    }
  },
);

t.test('a paused Messages round is sent back as it is and the turn goes on', async (t) => {
  const { daemon, anthropic } = await definitionsDaemon(t, { default_provider: 'anthropic' });
  const client = await daemon.connect('in-process');
  anthropic.replyModels(listing(['claude-test']));
  await client.call('catalog.refresh', {}, { operation: op() });
  await client.call(
    'settings.update',
    { workspace: null, changes: { model: 'claude-test' } },
    { operation: op() },
  );
  anthropic.script(stream([messageStart(), ...textBlock(0, ['Searching. ']), ...messageEnd('pause_turn')]));
  anthropic.script(messagesText(['Found it.']));
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Find it.' }));
  t.match((await who.client.event('turn.terminal')).payload, {
    status: 'completed',
    assistant_text: 'Searching. Found it.',
  });
  t.same(anthropic.requests.at(-1)!.body.messages, [
    { role: 'user', content: 'Find it.' },
    { role: 'assistant', content: [{ type: 'text', text: 'Searching. ' }] },
  ]);
});
