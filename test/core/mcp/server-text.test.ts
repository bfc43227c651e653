import t from 'tap';
import type { McpServerConfig } from '../../../core/mcp/mcp-types.js';
import { ServerText } from '../../../core/mcp/server-text.js';

const COMMON = {
  start_timeout_ms: 60_000,
  call_timeout_ms: 60_000,
  enabled: true,
  enabled_tools: null,
  disabled_tools: [],
};

function stdio(env: Record<string, string>): McpServerConfig {
  return { type: 'stdio', command: 'server', args: [], env, cwd: null, ...COMMON };
}

t.test('configured env values are replaced, the longest first; short ones are left alone', async (t) => {
  const text = new ServerText(stdio({ A: 'ntn_secret_4411', B: 'ntn_secret_4411_longer', C: 'info', D: '' }));
  t.equal(text.redact('token ntn_secret_4411_longer refused'), 'token [redacted] refused');
  t.equal(
    text.redact('retrying with ntn_secret_4411 at level info'),
    'retrying with [redacted] at level info',
  );
});

t.test("an http server's header values, their tokens and its URL's secrets are replaced", async (t) => {
  const text = new ServerText({
    type: 'http',
    url: 'https://user:p%40ssword-9@mcp.example.com/mcp?key=query-secret-77&region=eu',
    headers: { authorization: 'Custom header-token-5521', 'x-api': 'plain-header-8' },
    ...COMMON,
  });
  t.equal(
    text.redact('sent header-token-5521, plain-header-8, p@ssword-9 and query-secret-77 to eu'),
    'sent [redacted], [redacted], [redacted] and [redacted] to eu',
  );
});

t.test('tokens shaped like credentials are replaced whoever configured them', async (t) => {
  const text = new ServerText(stdio({}));
  for (const [said, shown] of <Array<[string, string]>>[
    ['Authorization: Bearer eyJhbGciOi.abc-123_x refused', 'Authorization: Bearer [redacted] refused'],
    ['invalid key sk-proj-AbCdEf0123456789xyz', 'invalid key [redacted]'],
    ['bad token ghp_0123456789abcdefABCDEF012345 here', 'bad token [redacted] here'],
    ['notion ntn_1234567890123456789012 denied', 'notion [redacted] denied'],
    ['aws AKIAABCDEFGHIJKLMNOP denied', 'aws [redacted] denied'],
    ['getaddrinfo ENOTFOUND api.notion.com', 'getaddrinfo ENOTFOUND api.notion.com'],
  ]) {
    t.equal(text.redact(said), shown, said);
  }
});

t.test('a line has no control characters or escapes and is cut between characters', async (t) => {
  const text = new ServerText(stdio({ KEY: 'line-secret-33' }));
  t.equal(
    text.line('\u001b[31merror:\u001b[0m line-secret-33\n\tat main\r\n', 100),
    'error: [redacted] at main',
  );
  t.equal(text.line('é'.repeat(10), 20), 'é'.repeat(10), 'exactly at the bound');
  t.equal(text.line('é'.repeat(11), 20), `${'é'.repeat(8)}…`, 'cut, with room for the ellipsis');
  t.equal(Buffer.byteLength(text.line('x'.repeat(5_000), 1_024)), 1_024);
});
