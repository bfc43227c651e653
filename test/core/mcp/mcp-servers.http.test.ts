import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { MCP_CALL_MESSAGES, MCP_LIMITS, MCP_SUPERVISION } from '../../../core/mcp/mcp-servers.js';
import type { McpHttpServerConfig } from '../../../core/mcp/mcp-types.js';
import { loopbackMcpServer } from '../../helpers/mcp-http-server.js';
import { harness, neverAborted, stateOf, until, untilState } from './mcp-fixture.js';

const KEY = 'sk-remote-never-shown-91b3';

function remote(url: string, overrides: Partial<McpHttpServerConfig> = {}): McpHttpServerConfig {
  return {
    type: 'http',
    url,
    headers: { 'X-Api-Key': KEY },
    start_timeout_ms: 5_000,
    call_timeout_ms: 5_000,
    enabled: true,
    enabled_tools: null,
    disabled_tools: [],
    ...overrides,
  };
}

t.test(
  'a Streamable HTTP server offers its tools and is called with its headers on every request',
  async (t) => {
    const server = await loopbackMcpServer(t);
    const { mcp, warnings } = harness(t, () => ({ remote: remote(server.url) }));
    await untilState(mcp, 'remote', 'ready');
    t.same(
      mcp.tools().map((tool) => [tool.name, tool.tool]),
      [
        ['mcp_remote_get-echo', 'get-echo'],
        ['mcp_remote_slow', 'slow'],
      ],
    );
    t.same(await mcp.call('mcp_remote_get-echo', { text: 'over http' }, neverAborted()), {
      ok: true,
      output: '{"content":"over http","is_error":false,"truncated":false}',
    });
    t.ok(server.requests.length >= 3, 'initialize, the list and the call at least');
    t.ok(
      server.requests.every((request) => request.headers['x-api-key'] === KEY),
      'the configured header on each request',
    );
    t.same(warnings, []);
    const session = server.requests.at(-1)?.headers['mcp-session-id'];
    await mcp.close();
    t.same(server.ended, [session], 'closing ends the session on the server');
  },
);

/** A loopback URL nothing listens on. */
async function nothingListening(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}/mcp`;
}

t.test('an unreachable URL is tried again with the backoff, never failed for good', async (t) => {
  const closedPort = await nothingListening();
  const { mcp, clock, warnings } = harness(t, () => ({ remote: remote(closedPort) }));
  await untilState(mcp, 'remote', 'restarting');
  t.same(mcp.status(), [
    {
      name: 'remote',
      state: 'restarting',
      tools: 0,
      reason: 'it could not be reached at its URL (ECONNREFUSED)',
    },
  ]);
  for (let i = 1; i <= MCP_SUPERVISION.spawn_attempts + 1; i++) {
    await until(`loss ${i}`, () => warnings.length === i);
    const warning = warnings[i - 1]!;
    t.match(warning, { fields: { server: 'remote', reason: 'unreachable', detail: 'ECONNREFUSED' } });
    clock.advance(warning.fields.delay_ms as number);
  }
  t.not(stateOf(mcp, 'remote'), 'failed', 'a server that may come back is not given up');
  t.notOk(JSON.stringify([warnings, mcp.status()]).includes(KEY));
});

t.test('a server that refuses the start says so with the HTTP status', async (t) => {
  const server = await loopbackMcpServer(t);
  server.failWith = 401;
  const { mcp, warnings } = harness(t, () => ({ remote: remote(server.url) }));
  await untilState(mcp, 'remote', 'restarting');
  t.match(mcp.status(), [{ reason: 'it refused initialize or tools/list (HTTP 401)' }]);
  t.match(warnings, [{ fields: { server: 'remote', reason: 'start_failed', detail: 'HTTP 401' } }]);
  t.notOk(JSON.stringify([warnings, mcp.status()]).includes(KEY));
});

t.test('a session the server no longer knows fails the call, and the server is reached again', async (t) => {
  const server = await loopbackMcpServer(t);
  const { mcp, clock } = harness(t, () => ({ remote: remote(server.url) }));
  await untilState(mcp, 'remote', 'ready');
  server.failWith = 404;
  t.same(await mcp.call('mcp_remote_get-echo', { text: 'x' }, neverAborted()), {
    ok: false,
    code: 'server_failed',
    message: MCP_CALL_MESSAGES.server_failed,
  });
  t.match(mcp.status(), [{ state: 'restarting', reason: 'the connection to it was lost' }]);
  server.failWith = null;
  clock.advance(MCP_LIMITS.backoff_ms_base);
  await untilState(mcp, 'remote', 'ready');
  t.match(await mcp.call('mcp_remote_get-echo', { text: 'again' }, neverAborted()), {
    ok: true,
    output: /"again"/,
  });
});

t.test('a remote call that gets no answer times out on the clock', async (t) => {
  const server = await loopbackMcpServer(t);
  const { mcp, clock } = harness(t, () => ({ remote: remote(server.url) }));
  await untilState(mcp, 'remote', 'ready');
  const pending = mcp.call('mcp_remote_slow', {}, neverAborted());
  await until('the call sent', () => server.requests.length >= 4);
  clock.advance(5_000);
  t.match(await pending, { ok: false, code: 'timed_out' });
  t.equal(stateOf(mcp, 'remote'), 'ready');
});
