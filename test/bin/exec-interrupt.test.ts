import t from 'tap';
import {
  killOnTeardown,
  processesLeft,
  processStarted,
  sandboxUnavailable,
} from '../helpers/sandbox-machine.js';
import { magid, runMagidIn, saidOnStderr, scene, serveHome, wireTo } from './exec-fixture.js';

t.setTimeout(180_000);

t.test(
  'Ctrl-C during run_command: the turn is stopped, its command’s processes are gone, exit 130, and history says so',
  { skip: sandboxUnavailable ?? false },
  async (t) => {
    const { home, workspace, provider, providerArgs } = await scene(t, {
      tools: { enabled: ['run_command'] },
    });
    await serveHome(t, home, providerArgs);
    const marker = `sleep ${94_000 + (process.pid % 1000)}`;
    killOnTeardown(t, marker);
    const command = `${marker} & ${marker}; wait`;
    provider.replyToolCalls([
      { id: 'c1', name: 'run_command', arguments: JSON.stringify({ command, timeout_ms: 600_000 }) },
    ]);
    const run = runMagidIn(t, ['exec', '--home', home, '--json', 'run it'], { cwd: workspace });
    await processStarted(marker);
    run.child.kill('SIGINT');
    await saidOnStderr(run, 'magid: stopping the turn (Ctrl-C again leaves at once)');
    const exit = await run.waitExit(30_000);
    t.equal(exit.code, 130);
    t.match(run.stderr, /magid: the turn was stopped\n$/);
    const frames = run.stdout
      .trimEnd()
      .split('\n')
      .map(
        (line) => JSON.parse(line) as { event: string; session_id: string; payload: Record<string, unknown> },
      );
    t.match(frames.at(-1), { event: 'turn.terminal', payload: { status: 'cancelled', error: null } });
    t.same(await processesLeft(marker, 10_000), [], 'both sleeps and their shell are gone');

    const client = await wireTo(t, home);
    const session = frames[0]!.session_id;
    const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
    const records = replay.records as Array<{ kind: string; data: Record<string, unknown> }>;
    t.match(records.find((record) => record.kind === 'turn.terminal')?.data, {
      status: 'cancelled',
      calls: [{ tool: 'run_command', status: 'cancelled', external_effects: 'uncertain' }],
    });
    const transcript = await magid(t, ['replay', '--home', home, session], { cwd: workspace });
    t.equal(transcript.stdout, '> run it\n✗ run_command: cancelled, effects uncertain\n[cancelled]\n');
  },
);
