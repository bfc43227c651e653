import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { MCP_CALL_MESSAGES, MCP_LIMITS, MCP_SUPERVISION } from '../../../core/mcp/mcp-servers.js';
import {
  alive,
  fixtureServer,
  harness,
  neverAborted,
  startedPids,
  stateOf,
  until,
  untilNoted,
  untilState,
  type Warning,
} from './mcp-fixture.js';

function delays(warnings: readonly Warning[]): unknown[] {
  return warnings.filter((warning) => 'delay_ms' in warning.fields).map((warning) => warning.fields.delay_ms);
}

t.test('a server that exits mid-call fails that call, then comes back ready after its backoff', async (t) => {
  const { mcp, clock, warnings, notes } = harness(t, (notes) => ({
    files: fixtureServer('normal', notes('files')),
  }));
  await untilState(mcp, 'files', 'ready');

  t.same(await mcp.call('mcp_files_crash', {}, neverAborted()), {
    ok: false,
    code: 'server_failed',
    message: MCP_CALL_MESSAGES.server_failed,
  });
  t.same(mcp.status(), [{ name: 'files', state: 'restarting', tools: 0, reason: 'it exited' }]);
  t.same(mcp.tools(), [], 'its tools are withdrawn while it is away');
  t.match(await mcp.call('mcp_files_echo', { text: 'x' }, neverAborted()), {
    ok: false,
    code: 'server_unavailable',
  });
  t.same(warnings.at(-1), {
    fields: { server: 'files', reason: 'exited', delay_ms: MCP_LIMITS.backoff_ms_base },
    message: 'MCP server stopped and is restarted after a delay',
  });

  clock.advance(MCP_LIMITS.backoff_ms_base - 1);
  await sleep(200);
  t.equal(startedPids(notes('files')).length, 1, 'not restarted before the backoff');
  clock.advance(1);
  await untilState(mcp, 'files', 'ready');
  t.equal(startedPids(notes('files')).length, 2, 'restarted once');
  t.equal(mcp.tools().length, 10, 'with its tools');
  t.match(await mcp.call('mcp_files_echo', { text: 'back' }, neverAborted()), { ok: true, output: /"back"/ });
});

t.test(
  'a child killed with SIGKILL fails its pending call; the backoff doubles and resets once stable',
  async (t) => {
    const { mcp, clock, warnings, notes } = harness(t, (notes) => ({
      files: fixtureServer('normal', notes('files')),
    }));
    const file = notes('files');
    await untilState(mcp, 'files', 'ready');

    const pending = mcp.call('mcp_files_slow', {}, neverAborted());
    await untilNoted(file, 'slow started');
    process.kill(startedPids(file)[0]!, 'SIGKILL');
    t.match(await pending, { ok: false, code: 'server_failed' });
    await untilState(mcp, 'files', 'restarting');
    clock.advance(1_000);
    await untilState(mcp, 'files', 'ready');

    process.kill(startedPids(file)[1]!, 'SIGKILL');
    await untilState(mcp, 'files', 'restarting');
    t.same(delays(warnings), [1_000, 2_000], 'lost again soon after: twice the delay');
    clock.advance(1_999);
    await sleep(200);
    t.equal(stateOf(mcp, 'files'), 'restarting');
    clock.advance(1);
    await untilState(mcp, 'files', 'ready');

    clock.advance(MCP_SUPERVISION.stable_ms);
    process.kill(startedPids(file)[2]!, 'SIGKILL');
    await untilState(mcp, 'files', 'restarting');
    t.same(delays(warnings), [1_000, 2_000, 1_000], 'ready for a while: the base delay again');
  },
);

t.test('a server that keeps exiting is restarted with a delay doubling up to the maximum', async (t) => {
  const { mcp, clock, warnings, notes } = harness(t, (notes) => ({
    gone: fixtureServer('exit', notes('gone')),
  }));
  const expected = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000];
  for (const [i, delay] of expected.entries()) {
    await until(`loss ${i + 1}`, () => delays(warnings).length === i + 1);
    t.equal(stateOf(mcp, 'gone'), 'restarting');
    clock.advance(delay);
  }
  t.same(delays(warnings), expected);
  t.ok(
    warnings.every((warning) => warning.fields.reason === 'exited'),
    'each loss is an exit',
  );
  t.ok(startedPids(notes('gone')).length >= expected.length, 'a child each time');
  t.equal(MCP_LIMITS.backoff_ms_max, 60_000);
});

t.test('a command that cannot be spawned is tried a few times, then failed for good', async (t) => {
  const { mcp, clock, warnings } = harness(t, () => ({
    missing: fixtureServer('normal', '', { command: '/nonexistent/mcp-server', args: [] }),
  }));
  await untilState(mcp, 'missing', 'restarting');
  clock.advance(1_000);
  await until('the second try', () => warnings.length === 2);
  t.equal(stateOf(mcp, 'missing'), 'restarting');
  clock.advance(2_000);
  await untilState(mcp, 'missing', 'failed');
  t.same(warnings, [
    {
      fields: { server: 'missing', reason: 'spawn_failed', detail: 'ENOENT', delay_ms: 1_000 },
      message: 'MCP server stopped and is restarted after a delay',
    },
    {
      fields: { server: 'missing', reason: 'spawn_failed', detail: 'ENOENT', delay_ms: 2_000 },
      message: 'MCP server stopped and is restarted after a delay',
    },
    {
      fields: { server: 'missing', reason: 'spawn_failed', detail: 'ENOENT' },
      message: 'MCP server failed and is not restarted',
    },
  ]);
  t.equal(MCP_SUPERVISION.spawn_attempts, 3);
  clock.advance(600_000);
  await sleep(50);
  t.same(
    mcp.status(),
    [{ name: 'missing', state: 'failed', tools: 0, reason: 'its command could not be started (ENOENT)' }],
    'never tried again',
  );
  t.match(await mcp.call('mcp_missing_x', {}, neverAborted()), { ok: false, code: 'server_unavailable' });
});

t.test('close() cancels a pending restart: nothing is spawned afterwards', async (t) => {
  const { mcp, clock, notes } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  t.match(await mcp.call('mcp_files_crash', {}, neverAborted()), { code: 'server_failed' });
  t.equal(stateOf(mcp, 'files'), 'restarting');
  await mcp.close();
  t.equal(stateOf(mcp, 'files'), 'stopped');
  clock.advance(MCP_LIMITS.backoff_ms_max);
  await sleep(500);
  t.equal(startedPids(notes('files')).length, 1, 'only the first child ever ran');
  t.same(startedPids(notes('files')).filter(alive), []);
});
