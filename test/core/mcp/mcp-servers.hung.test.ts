import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { MCP_CALL_MESSAGES, MCP_LIMITS, MCP_SUPERVISION } from '../../../core/mcp/mcp-servers.js';
import {
  alive,
  fixtureServer,
  harness,
  neverAborted,
  noted,
  startedPids,
  stateOf,
  until,
  untilNoted,
  untilState,
} from './mcp-fixture.js';

t.test(
  'a server that hangs mid-call is restarted after three calls in a row time out, with the backoff',
  async (t) => {
    const { mcp, clock, warnings, notes } = harness(t, (notes) => ({
      files: fixtureServer('normal', notes('files')),
    }));
    const file = notes('files');
    await untilState(mcp, 'files', 'ready');
    const [hung] = startedPids(file);
    const timedOut = { ok: false, code: 'timed_out', message: MCP_CALL_MESSAGES.timed_out };

    const frozen = mcp.call('mcp_files_freeze', {}, neverAborted());
    await untilNoted(file, 'freeze started');
    clock.advance(5_000);
    t.same(await frozen, timedOut);
    for (let i = 2; i <= MCP_SUPERVISION.call_timeouts; i++) {
      t.equal(stateOf(mcp, 'files'), 'ready', `still ready after ${i - 1} timeouts in a row`);
      const pending = mcp.call('mcp_files_echo', { text: 'anyone?' }, neverAborted());
      clock.advance(5_000);
      t.same(await pending, timedOut, `call ${i} gets no answer either`);
    }
    t.equal(stateOf(mcp, 'files'), 'restarting', `taken for hung after ${MCP_SUPERVISION.call_timeouts}`);
    t.same(warnings.at(-1), {
      fields: { server: 'files', reason: 'unresponsive', delay_ms: MCP_LIMITS.backoff_ms_base },
      message: 'MCP server stopped and is restarted after a delay',
    });
    await until('the hung child killed', () => !alive(hung!));
    clock.advance(MCP_LIMITS.backoff_ms_base - 1);
    await sleep(200);
    t.equal(startedPids(file).length, 1, 'not restarted before the backoff');
    clock.advance(1);
    await untilState(mcp, 'files', 'ready');
    t.equal(startedPids(file).length, 2, 'a new child');
    t.match(await mcp.call('mcp_files_echo', { text: 'back' }, neverAborted()), {
      ok: true,
      output: /"back"/,
    });
  },
);

t.test('an answer between timeouts starts the count again', async (t) => {
  const { mcp, clock, notes } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  const file = notes('files');
  await untilState(mcp, 'files', 'ready');
  const slow = async (n: number) => {
    const pending = mcp.call('mcp_files_slow', {}, neverAborted());
    await until(`slow call ${n}`, () => noted(file).filter((line) => line === 'slow started').length === n);
    clock.advance(5_000);
    t.match(await pending, { ok: false, code: 'timed_out' });
  };
  await slow(1);
  await slow(2);
  t.match(await mcp.call('mcp_files_echo', { text: 'here' }, neverAborted()), { ok: true });
  await slow(3);
  await slow(4);
  t.equal(stateOf(mcp, 'files'), 'ready', 'never three in a row');
  await slow(5);
  t.equal(stateOf(mcp, 'files'), 'restarting', 'the third in a row restarts it');
  t.equal(startedPids(file).length, 1);
});
