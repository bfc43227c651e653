import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import t from 'tap';
import { isAlive } from '../../config/daemon-record.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';
import { PROJECT_ROOT } from '../process/spawn-daemon.js';

interface DemoRun {
  code: number | null;
  stdout: string;
  /** The demo's directories left in its TMPDIR (tsx keeps its own cache there too). */
  leftovers: string[];
  /** The daemon's pid, as the demo reported it. */
  daemonPid: number;
}

/** Runs `npm run demo`'s command from the sources, with its own TMPDIR, outside the test runner's hooks. */
async function runDemo(t: Test, args: string[] = []): Promise<DemoRun> {
  const tmp = mkdtempSync('/tmp/md-');
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const child = spawn('env', [...WITHOUT_TEST_HOOKS, '--import', 'tsx', 'demo/run.ts', ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.resume();
  const [code] = (await once(child, 'close')) as [number | null];
  const pid = Number(/ready \(pid (\d+)\)/.exec(stdout)?.[1]);
  return {
    code,
    stdout,
    leftovers: readdirSync(tmp).filter((name) => name.startsWith('magi-demo-')),
    daemonPid: pid,
  };
}

t.test(
  'the demo completes a turn with one succeeded call and one that reads a file, then stops its daemon and removes its home',
  async (t) => {
    const run = await runDemo(t);
    t.equal(run.code, 0, 'exit status 0');
    t.match(run.stdout, /Turn completed\./);
    t.match(run.stdout, /find_note\s+succeeded\s+effects reported/);
    t.match(run.stdout, /magi\s+Your note about tea is notes\/tea\.md\./, 'the transcript');
    t.match(run.stdout, /tool\s+find_note\s+revision [0-9a-f]{12}/, 'the manifest');
    t.match(run.stdout, /executor ran find_note \{"query":"tea"\}/, 'progress while it runs');
    t.match(
      run.stdout,
      /you\s+What does notes\/tea\.md say\?\s+magi\s+It says: Sencha, 70 °C, two minutes\./,
      'a second turn in which the model read the file with read_file',
    );
    t.ok(run.daemonPid > 0, 'the daemon was started');
    t.notOk(isAlive(run.daemonPid), 'the daemon was stopped');
    t.same(run.leftovers, [], 'the temporary home was removed');
  },
);

t.test('a failing provider fails the demo, which still stops its daemon and removes its home', async (t) => {
  const provider = createServer((_request, response) => {
    response.writeHead(400, { 'x-should-retry': 'false' }).end();
  });
  provider.listen(0, '127.0.0.1');
  await once(provider, 'listening');
  t.teardown(() => provider.close());
  const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
  const run = await runDemo(t, ['--provider-base-url', url]);
  t.equal(run.code, 1, 'exit status 1');
  t.match(run.stdout, /Turn failed \(provider_error\)\./);
  t.notOk(isAlive(run.daemonPid), 'the daemon was stopped');
  t.same(run.leftovers, [], 'the temporary home was removed');
});
