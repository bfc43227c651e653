import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { isAlive } from '../../config/daemon-record.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';
import { PROJECT_ROOT } from '../process/spawn-daemon.js';

// Each demo starts its daemon, and the crash demo two applications, from the TypeScript sources.
t.setTimeout(150_000);

/** The demos' TMPDIRs, one per run, under one folder the file removes. */
const TMP = mkdtempSync('/tmp/md-');
t.teardown(() => rmSync(TMP, { recursive: true, force: true }));

interface DemoRun {
  code: number | null;
  stdout: string;
  /** The demo's directories left in its TMPDIR (tsx keeps its own cache there too). */
  leftovers: string[];
  /** The daemon's pid, as the demo reported it. */
  daemonPid: number;
}

/** Runs a demo (`npm run demo`'s by default) from the sources, with its own TMPDIR, outside the test runner's hooks. */
async function runDemo(args: string[] = [], script = 'demo/run.ts'): Promise<DemoRun> {
  const tmp = mkdtempSync(join(TMP, 'run-'));
  const child = spawn('env', [...WITHOUT_TEST_HOOKS, '--import', 'tsx', script, ...args], {
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
    const run = await runDemo();
    t.equal(run.code, 0, 'exit status 0');
    t.match(run.stdout, /Turn completed\./);
    t.match(run.stdout, /find_note\s+succeeded\s+effects reported\s+\(dispatched to executor generation 1\)/);
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
  const run = await runDemo(['--provider-base-url', url]);
  t.equal(run.code, 1, 'exit status 1');
  t.match(run.stdout, /Turn failed \(provider_error\)\./);
  t.notOk(isAlive(run.daemonPid), 'the daemon was stopped');
  t.same(run.leftovers, [], 'the temporary home was removed');
});

t.test(
  'the crash demo kills its application mid-call, starts it again, and the call completes once',
  async (t) => {
    const run = await runDemo([], 'demo/crash.ts');
    t.equal(run.code, 0, 'exit status 0');
    t.match(run.stdout, /application killed with SIGKILL while its handler ran/);
    t.match(run.stdout, /executor resumed at generation 2/);
    t.match(
      run.stdout,
      /find_note\s+succeeded\s+effects reported\s+\(dispatched to executor generation 1, its result delivered by generation 2 after the resume\)/,
    );
    t.match(run.stdout, /magi\s+Your note about tea is notes\/tea\.md\./);
    t.match(run.stdout, /The handler ran once\./);
    t.match(run.stdout, /Turn completed\./);
    t.equal(run.stdout.match(/handler ran find_note/g)?.length, 1, 'the handler ran in one process only');
    t.notOk(isAlive(run.daemonPid), 'the daemon was stopped');
    t.same(run.leftovers, [], 'the temporary home was removed');
  },
);
