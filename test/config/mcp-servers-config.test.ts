// biome-ignore-all lint/suspicious/noTemplateCurlyInString: configurations hold ${…} as text.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { ConfigError, parseConfig } from '../../config/config-file.js';
import { MCP_LIMITS } from '../../core/mcp/mcp-limits.js';
import type { McpServerEntry } from '../../core/mcp/mcp-types.js';

const READMES = readFileSync(new URL('../fixtures/mcp-configs/readme-servers.json', import.meta.url), 'utf8');

/** A value that must never appear in a reason. */
const SECRET = 'sk-do-not-echo-4f1c';

const DEFAULTS = {
  start_timeout_ms: 60_000,
  call_timeout_ms: 60_000,
  enabled: true,
  enabled_tools: null,
  disabled_tools: [],
};

function servers(section: Record<string, unknown>, member = 'mcp_servers'): Record<string, McpServerEntry> {
  return parseConfig(JSON.stringify({ [member]: section })).mcp_servers as Record<string, McpServerEntry>;
}

function entry(value: unknown): McpServerEntry {
  return servers({ s: value }).s!;
}

function reasonOf(value: unknown): string | undefined {
  const read = entry(value);
  return 'refused' in read ? read.refused : undefined;
}

t.test('every server of the eleven READMEs parses as written, with nothing left unread', async (t) => {
  const read = parseConfig(READMES).mcp_servers;
  t.same(Object.keys(read), [
    'sequential-thinking',
    'desktop-commander',
    'chrome-devtools',
    'notionApi',
    'filesystem',
    'memory',
    'git-mcp-server',
    'playwright',
    'everything',
    'mcp-server-code-runner',
    'context7',
  ]);
  for (const [key, value] of Object.entries(read)) {
    t.notOk('refused' in value, `${key} is usable`);
    t.same('refused' in value ? null : [value.unread, value.unexpanded], [[], []], `${key}: all of it read`);
  }
  t.same(read.notionApi, {
    config: {
      type: 'stdio',
      command: 'npx',
      args: ['-y', '@notionhq/notion-mcp-server'],
      env: {
        OPENAPI_MCP_HEADERS: '{"Authorization": "Bearer ntn_****", "Notion-Version": "2022-06-28" }',
      },
      cwd: null,
      ...DEFAULTS,
    },
    unread: [],
    unexpanded: [],
  });
  t.match(read['git-mcp-server'], { config: { type: 'stdio', env: { GIT_SIGN_COMMITS: 'false' } } });
  t.same(read.context7, {
    config: {
      type: 'http',
      url: 'https://mcp.context7.com/mcp',
      headers: { CONTEXT7_API_KEY: 'YOUR_API_KEY' },
      ...DEFAULTS,
    },
    unread: [],
    unexpanded: [],
  });
});

t.test('mcpServers and mcp_servers are read alike; both at once stop the daemon', async (t) => {
  const section = { notes: { command: 'notes-mcp', args: ['--stdio'] } };
  t.same(servers(section, 'mcpServers'), servers(section, 'mcp_servers'));
  t.notOk('mcpServers' in parseConfig(JSON.stringify({ mcpServers: section })), 'read, not carried through');
  t.throws(() => parseConfig(JSON.stringify({ mcp_servers: section, mcpServers: section })), {
    constructor: ConfigError,
    message: 'config.json: /mcp_servers and /mcpServers are both present; keep one',
  });
  for (const member of ['mcp_servers', 'mcpServers']) {
    for (const value of [[], 'servers', 3, null]) {
      t.throws(() => parseConfig(JSON.stringify({ [member]: value })), {
        constructor: ConfigError,
        message: `config.json: /${member} must be an object`,
        pointer: `/${member}`,
      });
    }
  }
  t.same(parseConfig('{}').mcp_servers, {});
});

t.test('any key of 1–64 characters is a server name; others are refused by themselves', async (t) => {
  const usable = ['sequential-thinking', 'notionApi', 'My Server', 'café', 'k'.repeat(64), '😀'.repeat(64)];
  const read = servers(
    Object.fromEntries([...usable, '', 'k'.repeat(65), 'tab\there'].map((key) => [key, { command: 'x' }])),
  );
  for (const key of usable) t.ok('config' in read[key]!, `${JSON.stringify(key).slice(0, 30)} is usable`);
  t.same(read[''], { refused: 'its name must be 1–64 characters without control characters' });
  t.same(read['tab\there'], { refused: 'its name must be 1–64 characters without control characters' });
  t.same(read[`${'k'.repeat(64)}…`], { refused: 'its name is over 64 characters' }, 'named by its beginning');
  t.equal(MCP_LIMITS.server_name_characters, 64);
});

t.test('a wrong entry is refused with a reason naming members, never values', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['npx server', 'its entry must be an object'],
    [{}, 'it has neither command nor url'],
    [{ command: 'x', url: 'http://127.0.0.1/mcp' }, 'it has both command and url; say which with type'],
    [{ command: '' }, 'command must be a non-empty string'],
    [{ command: 7 }, 'command must be a string'],
    [{ command: `a\u0000${SECRET}` }, 'command holds a NUL character'],
    [{ command: 'x', args: 'a b' }, 'args must be an array of strings'],
    [{ command: 'x', args: [SECRET, 3] }, 'args must be an array of strings'],
    [{ command: 'x', env: { TOKEN: 5 } }, 'env must be an object of strings'],
    [{ command: 'x', env: { [`A=${SECRET}`]: 'v' } }, 'env has a name it cannot carry'],
    [{ command: 'x', env: { TOKEN: `${SECRET}\u0000` } }, 'env holds a NUL character'],
    [{ command: 'x', cwd: 'relative/dir' }, 'cwd must be an absolute path'],
    [{ type: 'websocket', command: 'x' }, 'type must be "stdio" or "http"'],
    [
      { type: 'sse', url: 'http://127.0.0.1/sse' },
      'type "sse" (the protocol\'s old HTTP transport) is not supported; give its Streamable HTTP url',
    ],
    [{ type: 'http', command: 'x' }, 'url must be a non-empty string'],
    [{ url: `not a url ${SECRET}` }, 'url is not a URL'],
    [{ url: 'ftp://example.com/mcp' }, 'url must be http or https'],
    [
      { url: `https://user:${SECRET}@example.com/mcp` },
      'url must not hold credentials; give them in headers',
    ],
    [
      { url: 'https://example.com/mcp', headers: { 'Bad Name': SECRET } },
      'headers has a name it cannot carry',
    ],
    [
      { url: 'https://example.com/mcp', headers: { Authorization: `${SECRET}\n` } },
      'headers has a value that is not visible ASCII',
    ],
    [
      { url: 'https://example.com/mcp', headers: { Host: 'example.org' } },
      'headers sets host, which the daemon sets',
    ],
    [
      { url: 'https://example.com/mcp', headers: { a: SECRET }, http_headers: { a: SECRET } },
      'it has both headers and http_headers; keep one',
    ],
    [{ command: 'x', enabled: 'yes' }, 'enabled must be true or false'],
    [{ command: 'x', enabled_tools: 'echo' }, 'enabled_tools must be an array of strings'],
    [{ command: 'x', timeout_ms: '5000' }, 'timeout_ms must be a number giving 1000–600000 ms'],
    [
      { command: 'x', startup_timeout_sec: 10, startup_timeout_ms: 10_000 },
      'it has both startup_timeout_sec and startup_timeout_ms; keep one',
    ],
  ];
  for (const [value, reason] of cases) {
    const refused = reasonOf(value);
    t.equal(refused, reason, JSON.stringify(value).slice(0, 60));
    t.notMatch(refused ?? '', SECRET, 'no value in the reason');
  }
  const read = servers({ broken: {}, good: { command: 'x' } });
  t.ok('refused' in read.broken! && 'config' in read.good!, 'a refused entry leaves the others alone');
});

t.test(
  'start and call deadlines from timeout_ms or the Codex members, at and one past the bounds',
  async (t) => {
    const timeoutsOf = (value: Record<string, unknown>) => {
      const read = entry({ command: 'x', ...value });
      return 'config' in read ? [read.config.start_timeout_ms, read.config.call_timeout_ms] : read.refused;
    };
    t.same(timeoutsOf({}), [60_000, 60_000]);
    t.same(timeoutsOf({ timeout_ms: 5_000 }), [5_000, 5_000]);
    t.same(timeoutsOf({ timeout_ms: 5_000, startup_timeout_sec: 20 }), [20_000, 5_000]);
    t.same(timeoutsOf({ startup_timeout_ms: 20_000, tool_timeout_sec: 120 }), [20_000, 120_000]);
    t.same(timeoutsOf({ startup_timeout_sec: 1.5, tool_timeout_sec: 1.75 }), [1_500, 1_750]);
    for (const [member, unit] of [
      ['timeout_ms', 1],
      ['startup_timeout_ms', 1],
      ['startup_timeout_sec', 1_000],
      ['tool_timeout_sec', 1_000],
    ] as const) {
      const min = MCP_LIMITS.timeout_ms_min / unit;
      const max = MCP_LIMITS.timeout_ms_max / unit;
      t.type(timeoutsOf({ [member]: min }), Array, `${member} at its minimum`);
      t.type(timeoutsOf({ [member]: max }), Array, `${member} at its maximum`);
      t.equal(timeoutsOf({ [member]: min - 1 / unit }), `${member} must be a number giving 1000–600000 ms`);
      t.equal(timeoutsOf({ [member]: max + 1 / unit }), `${member} must be a number giving 1000–600000 ms`);
    }
  },
);

t.test('Codex entries: enabled, the tool lists, http_headers', async (t) => {
  t.match(entry({ command: 'x', enabled: false, enabled_tools: ['a'], disabled_tools: ['b'] }), {
    config: { enabled: false, enabled_tools: ['a'], disabled_tools: ['b'] },
  });
  t.match(entry({ url: 'http://127.0.0.1:3000/mcp', http_headers: { 'X-Team': 'core' } }), {
    config: { type: 'http', headers: { 'X-Team': 'core' } },
  });
});

t.test(
  'members the daemon does not read, and ${…} it does not expand, are listed for a warning',
  async (t) => {
    const read = entry({
      command: 'npx',
      args: ['server', '${workspaceFolder}'],
      env: { TOKEN: '${API_TOKEN}', PLAIN: 'x' },
      url: 'http://127.0.0.1/mcp',
      type: 'stdio',
      bearer_token_env_var: 'TOKEN',
      env_vars: ['HOME'],
      required: true,
      autoApprove: [],
    });
    t.match(read, {
      config: { type: 'stdio' },
      unread: ['url', 'bearer_token_env_var', 'env_vars', 'required', 'autoApprove'],
      unexpanded: ['args/1', 'env/TOKEN'],
    });
    const http = entry({
      type: 'http',
      url: 'https://example.com/${PATH}',
      headers: { Authorization: 'Bearer ${KEY}' },
      command: 'x',
    });
    t.match(http, { unread: ['command'], unexpanded: ['url', 'headers/Authorization'] });
    const many = entry({
      command: 'x',
      ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`m${i}`, 1])),
    });
    t.equal('config' in many ? many.unread?.length : 0, MCP_LIMITS.listed_members + 1);
    t.equal('config' in many ? many.unread?.at(-1) : '', '(8 more)');
  },
);
