import t from 'tap';
import type { ChatProvider, ProviderRequest } from '../../../core/provider/chat-provider.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
import { ProviderRouter, type RoutedProvider } from '../../../core/provider/provider-router.js';
import { request } from './provider-fixture.js';

function recording(name: string | null, api: RoutedProvider['api'], seen: string[]): RoutedProvider {
  const adapter: ChatProvider = {
    complete: async (sent: ProviderRequest) => {
      seen.push(`${name ?? '(section)'}:${sent.selection.model}`);
      return { text: '', toolCalls: [], finishReason: 'stop', usage: null };
    },
  };
  return { name, api, adapter };
}

const run = (router: ProviderRouter, model: string) =>
  router.complete(request({ selection: { model, reasoningEffort: null, fast: false } }), () => {});

t.test('NAME/model runs on NAME as model; anything else on the default provider as it is', async (t) => {
  const seen: string[] = [];
  const section = recording(null, 'chat_completions', seen);
  const openai = recording('openai', 'responses', seen);
  const anthropic = recording('anthropic', 'messages', seen);
  const router = new ProviderRouter(section, [openai, anthropic]);
  await run(router, 'openai/o4-mini');
  await run(router, 'anthropic/claude-sonnet-4-5');
  await run(router, 'gpt-4o');
  await run(router, 'mistralai/mixtral');
  await run(router, 'openai/');
  t.same(seen, [
    'openai:o4-mini',
    'anthropic:claude-sonnet-4-5',
    '(section):gpt-4o',
    '(section):mistralai/mixtral',
    '(section):openai/',
  ]);
  t.equal(router.catalogId('openai/o4-mini'), 'openai/o4-mini');
  t.equal(router.catalogId('gpt-4o'), 'gpt-4o');
  t.same(
    router.providers.map((provider) => provider.name),
    [null, 'openai', 'anthropic'],
  );
});

t.test('a named default serves bare models, listed under its name', async (t) => {
  const seen: string[] = [];
  const anthropic = recording('anthropic', 'messages', seen);
  const router = new ProviderRouter(anthropic, [recording('openai', 'responses', seen), anthropic]);
  await run(router, 'claude-haiku-4-5');
  await run(router, 'anthropic/claude-haiku-4-5');
  t.same(seen, ['anthropic:claude-haiku-4-5', 'anthropic:claude-haiku-4-5']);
  t.equal(router.catalogId('claude-haiku-4-5'), 'anthropic/claude-haiku-4-5');
  t.same(
    router.providers.map((provider) => provider.name),
    ['anthropic', 'openai'],
    'the default first, each once',
  );
});

t.test('without a default, a model that names no provider has no route', async (t) => {
  const router = new ProviderRouter(null, [recording('openai', 'responses', [])]);
  t.equal(router.route('gpt-4o'), null);
  t.equal(router.catalogId('gpt-4o'), null);
  await t.rejects(run(router, 'gpt-4o'), ProviderError);
});
