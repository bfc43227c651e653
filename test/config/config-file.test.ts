import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ConfigError, defaultConfig, loadConfigFile, parseConfig } from '../../config/config-file.js';
import { NO_PROVIDERS } from '../../core/provider/provider-definition.js';

/** A value that must never appear in an error message. */
const SECRET = 'sk-do-not-echo-4f1c';

const PROVIDER_DEFAULTS = {
  headers: {},
  stream_usage: true,
  assistant_tool_call_content: 'empty',
  reasoning_summary: false,
  oauth: null,
};

function homeWith(t: Test, text: string | Buffer): string {
  const home = t.testdir();
  writeFileSync(join(home, 'config.json'), text);
  return home;
}

function refusal(t: Test, text: string, message: string, pointer: string | null): void {
  const home = homeWith(t, text);
  let caught: unknown;
  try {
    loadConfigFile(home);
  } catch (error) {
    caught = error;
  }
  t.type(caught, ConfigError, `${JSON.stringify(text)} is refused`);
  const error = caught as ConfigError;
  t.equal(error.message, message);
  t.equal(error.pointer, pointer);
  t.notMatch(error.message, SECRET, 'the value is not echoed');
}

const RUN_COMMAND_DEFAULTS = { readable_paths: [], memory_bytes: null, processes: null };
const TOOL_DEFAULTS = {
  disabled: [],
  enabled: [],
  web_fetch: { allow_private_addresses: false },
  run_command: RUN_COMMAND_DEFAULTS,
};

t.test('a missing file means the defaults', async (t) => {
  const config = loadConfigFile(t.testdir());
  t.same(config, {
    skills: { disabled: [] },
    tools: TOOL_DEFAULTS,
    mcp_servers: {},
    provider_definitions: NO_PROVIDERS,
    provider: PROVIDER_DEFAULTS,
  });
  t.same(config, defaultConfig());
});

t.test('a missing home means the defaults too', async (t) => {
  t.same(loadConfigFile(join(t.testdir(), 'absent')), defaultConfig());
});

t.test('a valid file lists disabled skills and tools', async (t) => {
  const home = homeWith(
    t,
    JSON.stringify({ skills: { disabled: ['Review'] }, tools: { disabled: ['web_fetch'] } }),
  );
  t.same(loadConfigFile(home), {
    skills: { disabled: ['Review'] },
    tools: { ...TOOL_DEFAULTS, disabled: ['web_fetch'] },
    mcp_servers: {},
    provider_definitions: NO_PROVIDERS,
    provider: PROVIDER_DEFAULTS,
  });
});

t.test('absent known fields are filled with their defaults', async (t) => {
  t.same(parseConfig('{}'), defaultConfig());
  t.same(parseConfig('{"skills":{}}'), defaultConfig());
  t.same(parseConfig('{"tools":{"disabled":["a"]}}'), {
    skills: { disabled: [] },
    tools: { ...TOOL_DEFAULTS, disabled: ['a'] },
    mcp_servers: {},
    provider_definitions: NO_PROVIDERS,
    provider: PROVIDER_DEFAULTS,
  });
  t.same(parseConfig('{"provider":{}}'), defaultConfig());
});

t.test('unknown fields are passed through untouched, at the top level and nested', async (t) => {
  const document = {
    version: 3,
    theme: { colour: 'dark', sizes: [1, 2] },
    skills: { disabled: ['a'], search_paths: ['/opt/skills'], extra: null },
    tools: { shell: { allow: true } },
    list: [{ nested: 'x' }],
  };
  const config = loadConfigFile(homeWith(t, JSON.stringify(document)));
  t.same(config, {
    ...document,
    skills: document.skills,
    tools: { shell: { allow: true }, ...TOOL_DEFAULTS },
    mcp_servers: {},
    provider_definitions: NO_PROVIDERS,
    provider: PROVIDER_DEFAULTS,
  });
  t.same(config.theme, { colour: 'dark', sizes: [1, 2] });
  t.same(config.skills.search_paths, ['/opt/skills']);
  t.equal(config.skills.extra, null);
  t.same(config.tools.shell, { allow: true });
});

t.test('a __proto__ field stays a plain field and never reaches a prototype', async (t) => {
  const config = parseConfig('{"__proto__":{"polluted":true},"skills":{"__proto__":{"disabled":["x"]}}}');
  t.equal(({} as Record<string, unknown>).polluted, undefined);
  t.equal((config as Record<string, unknown>).polluted, undefined);
  t.same(config.skills.disabled, []);
  t.ok(Object.hasOwn(config, '__proto__'), 'kept as an own field');
});

t.test('each field of the wrong type is named by its JSON pointer, without its value', async (t) => {
  refusal(t, `"${SECRET}"`, 'config.json: the document must be an object', '');
  refusal(t, `["${SECRET}"]`, 'config.json: the document must be an object', '');
  refusal(t, 'null', 'config.json: the document must be an object', '');
  refusal(t, `{"skills":"${SECRET}"}`, 'config.json: /skills must be an object', '/skills');
  refusal(t, `{"skills":["${SECRET}"]}`, 'config.json: /skills must be an object', '/skills');
  refusal(t, `{"tools":7}`, 'config.json: /tools must be an object', '/tools');
  refusal(
    t,
    `{"skills":{"disabled":"${SECRET}"}}`,
    'config.json: /skills/disabled must be an array',
    '/skills/disabled',
  );
  refusal(
    t,
    `{"tools":{"disabled":{"a":"${SECRET}"}}}`,
    'config.json: /tools/disabled must be an array',
    '/tools/disabled',
  );
  refusal(
    t,
    `{"skills":{"disabled":["a","b",{"k":"${SECRET}"}]}}`,
    'config.json: /skills/disabled/2 must be a string',
    '/skills/disabled/2',
  );
  refusal(
    t,
    '{"tools":{"disabled":[null]}}',
    'config.json: /tools/disabled/0 must be a string',
    '/tools/disabled/0',
  );
});

t.test('several problems report the first and count the rest', async (t) => {
  refusal(
    t,
    `{"skills":{"disabled":[1,2]},"tools":"${SECRET}"}`,
    'config.json: /skills/disabled/0 must be a string (and 2 more problems)',
    '/skills/disabled/0',
  );
});

t.test('invalid JSON is refused without quoting the text', async (t) => {
  refusal(t, `{"skills": ${SECRET}}`, 'config.json: is not valid JSON', null);
  refusal(t, `{"a":"${SECRET}",}`, 'config.json: is not valid JSON', null);
  refusal(t, '', 'config.json: is not valid JSON', null);
});

t.test('invalid UTF-8 is refused', async (t) => {
  const home = homeWith(t, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
  t.throws(() => loadConfigFile(home), new ConfigError('is not valid UTF-8'));
});

t.test('a byte order mark is accepted', async (t) => {
  const home = homeWith(t, `\uFEFF${JSON.stringify({ tools: { disabled: ['x'] } })}`);
  t.same(loadConfigFile(home).tools.disabled, ['x']);
});

t.test('a file that cannot be read is refused with the reason', async (t) => {
  const home = t.testdir();
  mkdirSync(join(home, 'config.json'));
  t.throws(() => loadConfigFile(home), {
    name: 'ConfigError',
    message: 'config.json: cannot be read (EISDIR)',
  });
});

t.test('each default is a fresh value', async (t) => {
  const first = defaultConfig();
  (first.skills.disabled as string[]).push('changed');
  (first.tools.disabled as string[]).push('changed');
  (first.provider.headers as Record<string, string>)['x-changed'] = 'yes';
  (first.tools.enabled as string[]).push('write_file');
  t.same(defaultConfig(), {
    skills: { disabled: [] },
    tools: TOOL_DEFAULTS,
    mcp_servers: {},
    provider_definitions: NO_PROVIDERS,
    provider: PROVIDER_DEFAULTS,
  });
});

t.test('the tools section: which built-in tools to enable, and where web_fetch may reach', async (t) => {
  const config = parseConfig(
    JSON.stringify({
      tools: {
        enabled: ['write_file', 'run_command'],
        web_fetch: { allow_private_addresses: true, other: 1 },
      },
    }),
  );
  t.same(config.tools, {
    disabled: [],
    enabled: ['write_file', 'run_command'],
    web_fetch: { allow_private_addresses: true, other: 1 },
    run_command: RUN_COMMAND_DEFAULTS,
  });
  refusal(
    t,
    '{"tools":{"enabled":["web_search"]}}',
    'config.json: /tools/enabled/0 is not one of the allowed values',
    '/tools/enabled/0',
  );
  refusal(
    t,
    '{"tools":{"enabled":["shell"]}}',
    'config.json: /tools/enabled/0 is not one of the allowed values',
    '/tools/enabled/0',
  );
  refusal(
    t,
    '{"tools":{"enabled":"write_file"}}',
    'config.json: /tools/enabled must be an array',
    '/tools/enabled',
  );
  refusal(
    t,
    '{"tools":{"web_fetch":{"allow_private_addresses":"yes"}}}',
    'config.json: /tools/web_fetch/allow_private_addresses must be a boolean',
    '/tools/web_fetch/allow_private_addresses',
  );
});

t.test('the run_command section: readable paths and the bounds, within their ranges', async (t) => {
  const config = parseConfig(
    JSON.stringify({
      tools: {
        run_command: {
          readable_paths: ['~/.local/share/pnpm', '/opt/sdk'],
          memory_bytes: 67_108_864,
          processes: 16,
          x: 1,
        },
      },
    }),
  );
  t.same(config.tools.run_command, {
    readable_paths: ['~/.local/share/pnpm', '/opt/sdk'],
    memory_bytes: 67_108_864,
    processes: 16,
    x: 1,
  });
  t.same(
    parseConfig(JSON.stringify({ tools: { run_command: { processes: 65_536 } } })).tools.run_command
      .processes,
    65_536,
  );
  t.same(
    parseConfig(JSON.stringify({ tools: { run_command: { readable_paths: Array(64).fill('/opt') } } })).tools
      .run_command.readable_paths.length,
    64,
  );
  refusal(
    t,
    '{"tools":{"run_command":{"memory_bytes":67108863}}}',
    'config.json: /tools/run_command/memory_bytes is not valid',
    '/tools/run_command/memory_bytes',
  );
  refusal(
    t,
    '{"tools":{"run_command":{"processes":15}}}',
    'config.json: /tools/run_command/processes is not valid',
    '/tools/run_command/processes',
  );
  refusal(
    t,
    '{"tools":{"run_command":{"processes":65537}}}',
    'config.json: /tools/run_command/processes is not valid',
    '/tools/run_command/processes',
  );
  refusal(
    t,
    '{"tools":{"run_command":{"processes":16.5}}}',
    'config.json: /tools/run_command/processes must be an integer',
    '/tools/run_command/processes',
  );
  refusal(
    t,
    JSON.stringify({ tools: { run_command: { readable_paths: Array(65).fill('/opt') } } }),
    'config.json: /tools/run_command/readable_paths is not valid',
    '/tools/run_command/readable_paths',
  );
  refusal(
    t,
    '{"tools":{"run_command":{"readable_paths":[""]}}}',
    'config.json: /tools/run_command/readable_paths/0 is not valid',
    '/tools/run_command/readable_paths/0',
  );
});

t.test('the provider section: headers, usage and the content of calling assistant messages', async (t) => {
  const config = loadConfigFile(
    homeWith(
      t,
      JSON.stringify({
        provider: {
          headers: { 'X-Title': 'magi', Authorization: `Bearer ${SECRET}`, 'x-empty': '' },
          stream_usage: false,
          assistant_tool_call_content: 'null',
          timeout_hint: 30,
        },
      }),
    ),
  );
  t.same(config.provider, {
    headers: { 'X-Title': 'magi', Authorization: `Bearer ${SECRET}`, 'x-empty': '' },
    stream_usage: false,
    assistant_tool_call_content: 'null',
    reasoning_summary: false,
    oauth: null,
    timeout_hint: 30,
  });
  t.same(parseConfig('{"provider":{"stream_usage":true}}').provider, PROVIDER_DEFAULTS);
});

t.test('a wrong provider field is named by its pointer, never with its value', async (t) => {
  refusal(t, `{"provider":"${SECRET}"}`, 'config.json: /provider must be an object', '/provider');
  refusal(
    t,
    `{"provider":{"headers":["${SECRET}"]}}`,
    'config.json: /provider/headers must be an object',
    '/provider/headers',
  );
  refusal(
    t,
    `{"provider":{"headers":{"x-api-key":{"v":"${SECRET}"}}}}`,
    'config.json: /provider/headers/x-api-key must be a string',
    '/provider/headers/x-api-key',
  );
  refusal(
    t,
    `{"provider":{"headers":{"x-api-key":"${SECRET}\\r\\nx-evil: 1"}}}`,
    'config.json: /provider/headers/x-api-key is not valid',
    '/provider/headers/x-api-key',
  );
  refusal(
    t,
    `{"provider":{"headers":{"x-api-key":"${SECRET}\\u00e9"}}}`,
    'config.json: /provider/headers/x-api-key is not valid',
    '/provider/headers/x-api-key',
  );
  refusal(
    t,
    `{"provider":{"stream_usage":"${SECRET}"}}`,
    'config.json: /provider/stream_usage must be a boolean',
    '/provider/stream_usage',
  );
  refusal(
    t,
    `{"provider":{"assistant_tool_call_content":"${SECRET}"}}`,
    'config.json: /provider/assistant_tool_call_content is not one of the allowed values',
    '/provider/assistant_tool_call_content',
  );
  refusal(
    t,
    '{"provider":{"assistant_tool_call_content":null}}',
    'config.json: /provider/assistant_tool_call_content is not one of the allowed values',
    '/provider/assistant_tool_call_content',
  );
});

t.test('a header name that is not an HTTP token is refused without being repeated', async (t) => {
  for (const name of [`Bearer ${SECRET}`, `${SECRET}:`, '', `x\\n${SECRET}`, `é${SECRET}`]) {
    refusal(
      t,
      JSON.stringify({ provider: { headers: { ok: 'v', [name]: 'v' } } }),
      'config.json: /provider/headers has a name that is not an HTTP header name',
      '/provider/headers',
    );
  }
});

t.test('headers the daemon sets itself cannot be configured', async (t) => {
  for (const name of [
    'Content-Type',
    'accept',
    'Host',
    'content-length',
    'Transfer-Encoding',
    'connection',
  ]) {
    refusal(
      t,
      JSON.stringify({ provider: { headers: { [name]: SECRET } } }),
      `config.json: /provider/headers/${name} is a header the daemon sets itself`,
      `/provider/headers/${name}`,
    );
  }
  refusal(
    t,
    JSON.stringify({ provider: { headers: { 'x~host': 'x', host: 'y' } } }),
    'config.json: /provider/headers/host is a header the daemon sets itself',
    '/provider/headers/host',
  );
});

t.test('reasoning summaries are read only when the provider section says it sends them', async (t) => {
  t.equal(parseConfig('{"provider":{"reasoning_summary":true}}').provider.reasoning_summary, true);
  t.equal(parseConfig('{"provider":{}}').provider.reasoning_summary, false);
  refusal(
    t,
    '{"provider":{"reasoning_summary":"yes"}}',
    'config.json: /provider/reasoning_summary must be a boolean',
    '/provider/reasoning_summary',
  );
});

t.test('the mcp_servers section: each server by name, its defaults filled in', async (t) => {
  const config = parseConfig(
    JSON.stringify({
      mcp_servers: {
        notes: {
          command: 'notes-mcp',
          args: ['--stdio'],
          env: { TOKEN: 'secret-token-1' },
          timeout_ms: 5_000,
        },
        off: { command: 'other', enabled: false },
        broken: { args: [SECRET] },
      },
    }),
  );
  t.same(config.mcp_servers, {
    notes: {
      config: {
        type: 'stdio',
        command: 'notes-mcp',
        args: ['--stdio'],
        env: { TOKEN: 'secret-token-1' },
        cwd: null,
        start_timeout_ms: 5_000,
        call_timeout_ms: 5_000,
        enabled: true,
        enabled_tools: null,
        disabled_tools: [],
      },
      unread: [],
      unexpanded: [],
    },
    off: {
      config: {
        type: 'stdio',
        command: 'other',
        args: [],
        env: {},
        cwd: null,
        start_timeout_ms: 60_000,
        call_timeout_ms: 60_000,
        enabled: false,
        enabled_tools: null,
        disabled_tools: [],
      },
      unread: [],
      unexpanded: [],
    },
    broken: { refused: 'it has neither command nor url' },
  });
  t.notMatch(JSON.stringify(config.mcp_servers.broken), SECRET);
});

t.test('provider.oauth is checked and read into the login configuration', async (t) => {
  const config = parseConfig(
    JSON.stringify({
      provider: {
        oauth: {
          issuer: 'https://auth.example.com',
          client_id: 'magid',
          scopes: ['openid', 'offline_access'],
          authorization_parameters: { audience: 'models' },
        },
      },
    }),
  );
  t.match(config.provider.oauth, {
    server: { kind: 'discovery' },
    clientId: 'magid',
    scopes: ['openid', 'offline_access'],
    authorizationParameters: { audience: 'models' },
    loginTimeoutMs: 300_000,
  });
  refusal(
    t,
    `{"provider":{"oauth":{"issuer":"http://${SECRET}.example.com","client_id":"c"}}}`,
    'config.json: /provider/oauth/issuer must be https (http only on a loopback address)',
    '/provider/oauth/issuer',
  );
  refusal(
    t,
    '{"provider":{"oauth":{"issuer":"https://a.example"}}}',
    'config.json: /provider/oauth is not valid',
    '/provider/oauth',
  );
  refusal(
    t,
    `{"provider":{"oauth":{"issuer":"https://a.example","client_id":"c","scopes":["has space ${SECRET}"]}}}`,
    'config.json: /provider/oauth/scopes/0 is not valid',
    '/provider/oauth/scopes/0',
  );
});
