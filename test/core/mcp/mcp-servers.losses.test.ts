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

t.test('a message over the size bound drops only that server, which is restarted', async (t) => {
  const { mcp, clock } = harness(t, (notes) => ({
    files: fixtureServer('normal', notes('files')),
    other: fixtureServer('normal', notes('other')),
  }));
  await untilState(mcp, 'files', 'ready');
  await untilState(mcp, 'other', 'ready');
  t.match(await mcp.call('mcp_files_flood', {}, neverAborted()), { ok: false, code: 'server_failed' });
  await untilState(mcp, 'files', 'restarting');
  t.equal(stateOf(mcp, 'other'), 'ready');
  t.match(await mcp.call('mcp_other_echo', { text: 'fine' }, neverAborted()), { ok: true, output: /"fine"/ });
  clock.advance(MCP_LIMITS.backoff_ms_base);
  await untilState(mcp, 'files', 'ready');
});

t.test('a server that refuses to list its tools is restarted', async (t) => {
  const { mcp, warnings, notes } = harness(t, (notes) => ({
    sulky: fixtureServer('refuse', notes('sulky')),
  }));
  await untilState(mcp, 'sulky', 'restarting');
  const [pid] = startedPids(notes('sulky'));
  await until('the refusing child killed', () => !alive(pid!));
  t.same(warnings, [
    {
      fields: { server: 'sulky', reason: 'start_failed', delay_ms: 1_000 },
      message: 'MCP server stopped and is restarted after a delay',
    },
  ]);
  t.same(mcp.tools(), []);
});

t.test(
  'a server that exits says why in the log (its last stderr lines, secrets replaced) and in status (its last line)',
  async (t) => {
    const secret = 'fixture-token-7c2e99';
    const { mcp, warnings } = harness(t, (notes) => ({
      sulky: fixtureServer('complain', notes('sulky'), {
        env: { FIXTURE_NOTES: notes('sulky'), FIXTURE_SECRET: secret },
      }),
    }));
    await untilState(mcp, 'sulky', 'restarting');
    const [warning] = warnings;
    t.match(warning, {
      fields: { server: 'sulky', reason: 'exited', delay_ms: 1_000 },
      message: 'MCP server stopped and is restarted after a delay',
    });
    const stderr = warning!.fields.stderr as string[];
    t.equal(stderr.length, MCP_SUPERVISION.stderr_log_lines, 'the last lines, bounded');
    t.equal(stderr.at(-1), 'cannot log in with token [redacted]', 'the last line, its secret replaced');
    t.equal(stderr[0], 'complaint 7', 'the lines before the last twenty are left out');
    t.notOk(JSON.stringify(warnings).includes(secret), 'the secret is never logged');
    t.same(mcp.status(), [
      {
        name: 'sulky',
        state: 'restarting',
        tools: 0,
        reason: 'it exited; its last stderr line: cannot log in with token [redacted]',
      },
    ]);
    t.notOk(JSON.stringify(mcp.status()).includes('complaint'), 'status carries only the last line');
    t.notOk(JSON.stringify(mcp.status()).includes(secret), 'never the secret');
  },
);
