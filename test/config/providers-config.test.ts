import t from 'tap';
import { ConfigError, parseConfig } from '../../config/config-file.js';
import { NO_PROVIDERS } from '../../core/provider/provider-definition.js';

const parse = (document: unknown) => parseConfig(JSON.stringify(document)).provider_definitions;

function refusal(document: unknown): ConfigError {
  try {
    parse(document);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the config was accepted');
}

t.test(
  'without providers there are none; the provider section alone is an old home, unchanged',
  async (t) => {
    t.same(parse({}), NO_PROVIDERS);
    t.same(parse({ provider: { headers: { 'X-Title': 'magi' } } }), NO_PROVIDERS);
  },
);

t.test('each API with its defaults, in the file order, and the default provider', async (t) => {
  const section = parse({
    providers: {
      openai: {
        api: 'responses',
        base_url: 'https://api.openai.com/v1',
        api_key_env: 'OPENAI_API_KEY',
        reasoning_summary: true,
      },
      anthropic: {
        api: 'messages',
        base_url: 'https://api.anthropic.com/v1',
        api_key_env: 'ANTHROPIC_API_KEY',
        max_tokens: 16_000,
        models: { 'claude-haiku-4-5': { max_tokens: 4_096 } },
      },
      local: {
        api: 'chat_completions',
        base_url: 'http://127.0.0.1:8080/v1',
        headers: { 'X-Title': 'magi' },
      },
    },
    default_provider: 'anthropic',
  });
  t.equal(section.defaultProvider, 'anthropic');
  t.same(
    section.definitions.map((definition) => definition.name),
    ['openai', 'anthropic', 'local'],
  );
  t.match(section.definitions[0], {
    api: 'responses',
    baseUrl: 'https://api.openai.com/v1',
    apiKeyEnv: 'OPENAI_API_KEY',
    reasoningSummary: true,
    headers: {},
  });
  t.match(section.definitions[1], {
    api: 'messages',
    maxTokens: 16_000,
    modelOptions: { 'claude-haiku-4-5': { maxTokens: 4_096 } },
    anthropicVersion: '2023-06-01',
    auth: 'x-api-key',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
  });
  t.match(section.definitions[2], {
    api: 'chat_completions',
    headers: { 'X-Title': 'magi' },
    streamUsage: true,
    assistantToolCallContent: 'empty',
    apiKeyEnv: null,
    reasoningSummary: false,
  });
  t.equal(
    parse({ providers: { m: { api: 'messages', base_url: 'http://h/v1' } } }).definitions[0]?.maxTokens,
    8_192,
  );
});

t.test('a wrong definition stops the daemon with its pointer, never a value', async (t) => {
  const secret = 'sk-should-never-show';
  const cases: Array<[string, unknown, string]> = [
    ['not an object', { providers: [] }, '/providers'],
    [
      'a name with a slash',
      { providers: { 'a/b': { api: 'responses', base_url: 'http://h' } } },
      '/providers',
    ],
    [
      'an unknown API',
      { providers: { x: { api: 'completions', base_url: 'http://h' } } },
      '/providers/x/api',
    ],
    ['no base URL', { providers: { x: { api: 'responses' } } }, '/providers/x'],
    [
      'a base URL that is not http',
      { providers: { x: { api: 'responses', base_url: 'file:///etc' } } },
      '/providers/x/base_url',
    ],
    [
      'credentials in the URL',
      { providers: { x: { api: 'responses', base_url: `https://u:${secret}@h/v1` } } },
      '/providers/x/base_url',
    ],
    [
      'another API member',
      { providers: { x: { api: 'messages', base_url: 'http://h', reasoning_summary: true } } },
      '/providers/x/reasoning_summary',
    ],
    [
      'a chat member on responses',
      { providers: { x: { api: 'responses', base_url: 'http://h', stream_usage: false } } },
      '/providers/x/stream_usage',
    ],
    [
      'a reserved header',
      { providers: { x: { api: 'messages', base_url: 'http://h', headers: { Host: 'a' } } } },
      '/providers/x/headers/Host',
    ],
    [
      'a bad header value',
      { providers: { x: { api: 'messages', base_url: 'http://h', headers: { 'X-Key': `${secret}\n` } } } },
      '/providers/x/headers/X-Key',
    ],
    [
      'a bad variable name',
      { providers: { x: { api: 'messages', base_url: 'http://h', api_key_env: 'A-B' } } },
      '/providers/x/api_key_env',
    ],
    [
      'a default that names none',
      { providers: { x: { api: 'messages', base_url: 'http://h' } }, default_provider: 'y' },
      '/default_provider',
    ],
    ['a default without providers', { default_provider: 'y' }, '/default_provider'],
  ];
  for (const [what, document, pointer] of cases) {
    const error = refusal(document);
    t.equal(error.pointer, pointer, what);
    t.notMatch(error.message, secret, `${what}: no value repeated`);
  }
  const malformedName = refusal({
    providers: { x: { api: 'messages', base_url: 'http://h', headers: { [`${secret} x`]: 'v' } } },
  });
  t.notMatch(malformedName.message, secret, 'a malformed header name is not repeated');
});

t.test('Responses options by provider and by model; a model member of another API is refused', async (t) => {
  const [definition] = parse({
    providers: {
      openai: {
        api: 'responses',
        base_url: 'https://api.openai.com/v1',
        encrypted_reasoning: true,
        reasoning_summary: true,
        models: { 'gpt-4o': { encrypted_reasoning: false, reasoning_summary: false } },
      },
    },
  }).definitions;
  t.match(definition, {
    encryptedReasoning: true,
    reasoningSummary: true,
    modelOptions: { 'gpt-4o': { encryptedReasoning: false, reasoningSummary: false } },
  });
  t.equal(
    parse({ providers: { o: { api: 'responses', base_url: 'http://h' } } }).definitions[0]
      ?.encryptedReasoning,
    true,
  );
  t.equal(
    refusal({
      providers: { o: { api: 'responses', base_url: 'http://h', models: { m: { max_tokens: 9 } } } },
    }).pointer,
    '/providers/o/models/m/max_tokens',
  );
  t.equal(
    refusal({
      providers: {
        a: { api: 'messages', base_url: 'http://h', models: { m: { encrypted_reasoning: false } } },
      },
    }).pointer,
    '/providers/a/models/m/encrypted_reasoning',
  );
  t.equal(
    refusal({
      providers: { c: { api: 'chat_completions', base_url: 'http://h', encrypted_reasoning: false } },
    }).pointer,
    '/providers/c/encrypted_reasoning',
  );
});
