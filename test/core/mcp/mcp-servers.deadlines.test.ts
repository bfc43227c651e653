import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { MCP_CALL_MESSAGES, MCP_SUPERVISION } from '../../../core/mcp/mcp-servers.js';
import {
  alive,
  fixtureServer,
  harness,
  neverAborted,
  noted,
  settled,
  startedPids,
  stateOf,
  until,
  untilNoted,
  untilState,
} from './mcp-fixture.js';

t.test(
  'a server that never answers initialize stays out while another serves, and is killed at its deadline',
  async (t) => {
    const { mcp, clock, warnings, notes } = harness(t, (notes) => ({
      hung: fixtureServer('silent', notes('hung')),
      files: fixtureServer('normal', notes('files')),
    }));
    await untilState(mcp, 'files', 'ready');
    await untilNoted(notes('hung'), 'ready');
    t.same(mcp.status(), [
      { name: 'hung', state: 'starting', tools: 0 },
      { name: 'files', state: 'ready', tools: 10 },
    ]);
    t.ok(
      mcp.tools().every((tool) => tool.server === 'files'),
      'only the ready server offers tools',
    );
    t.match(await mcp.call('mcp_files_echo', { text: 'served' }, neverAborted()), {
      ok: true,
      output: /"served"/,
    });
    t.match(await mcp.call('mcp_hung_echo', { text: 'x' }, neverAborted()), {
      ok: false,
      code: 'server_unavailable',
    });

    const [pid] = startedPids(notes('hung'));
    clock.advance(4_999);
    await sleep(200);
    t.equal(stateOf(mcp, 'hung'), 'starting', 'not before the start deadline');
    t.ok(alive(pid!));
    clock.advance(1);
    await untilState(mcp, 'hung', 'restarting');
    await until('the hung child gone', () => !alive(pid!));
    t.same(
      warnings.filter((warning) => warning.fields.server === 'hung'),
      [
        {
          fields: { server: 'hung', reason: 'start_timeout', delay_ms: 1_000 },
          message: 'MCP server stopped and is restarted after a delay',
        },
      ],
    );
    t.equal(stateOf(mcp, 'files'), 'ready', 'the other server is untouched');
  },
);

t.test('a call that gets no answer times out on the clock, not before, and the server is told', async (t) => {
  const { mcp, clock, notes } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  const pending = mcp.call('mcp_files_slow', {}, neverAborted());
  await untilNoted(notes('files'), 'slow started');
  clock.advance(4_999);
  t.equal(await settled(pending), false, 'still waiting just before the deadline');
  clock.advance(1);
  t.same(await pending, { ok: false, code: 'timed_out', message: MCP_CALL_MESSAGES.timed_out });
  await untilNoted(notes('files'), 'slow cancelled');
  t.equal(stateOf(mcp, 'files'), 'ready', 'a slow tool does not cost the server');
  t.match(await mcp.call('mcp_files_echo', { text: 'after' }, neverAborted()), {
    ok: true,
    output: /"after"/,
  });
});

t.test('aborting the signal answers cancelled at once and cancels the request on the server', async (t) => {
  const { mcp, notes } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  const controller = new AbortController();
  const pending = mcp.call('mcp_files_slow', {}, controller.signal);
  await untilNoted(notes('files'), 'slow started');
  t.equal(await settled(pending), false);
  controller.abort();
  t.same(await pending, { ok: false, code: 'cancelled', message: MCP_CALL_MESSAGES.cancelled });
  await untilNoted(notes('files'), 'slow cancelled');
  t.equal(stateOf(mcp, 'files'), 'ready');
});

t.test('close() kills a child that ignores SIGTERM with SIGKILL after the grace on the clock', async (t) => {
  const { mcp, clock, notes } = harness(t, (notes) => ({ stiff: fixtureServer('stubborn', notes('stiff')) }));
  await untilState(mcp, 'stiff', 'ready');
  const [pid] = startedPids(notes('stiff'));
  const closing = mcp.close();
  await untilNoted(notes('stiff'), 'sigterm ignored');
  clock.advance(MCP_SUPERVISION.kill_grace_ms - 1);
  t.equal(await settled(closing), false, 'waits for the child');
  t.ok(alive(pid!), 'alive through the grace');
  clock.advance(1);
  await closing;
  t.notOk(alive(pid!), 'gone once close() settles');
});

t.test('close() while a server is still starting kills it', async (t) => {
  const { mcp, notes } = harness(t, (notes) => ({ hung: fixtureServer('silent', notes('hung')) }));
  await untilNoted(notes('hung'), 'ready');
  const [pid] = startedPids(notes('hung'));
  t.equal(stateOf(mcp, 'hung'), 'starting');
  await mcp.close();
  t.notOk(alive(pid!));
  t.same(noted(notes('hung')).filter((line) => line.startsWith('started')).length, 1);
});
