import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MagiClient } from '../client/index.js';
import * as report from './report.js';
import { startScriptedProvider } from './scripted-provider.js';
import { writeWorkspace } from './workspace.js';

/**
 * `npm run demo:crash`: an application is killed with SIGKILL while its tool handler runs, started
 * again, resumes its executor from its file store and delivers the result it had journaled; the turn
 * completes and the handler ran once.
 */
const root = mkdtempSync(join(tmpdir(), 'magi-demo-'));
const home = join(root, 'home');
const workspace = join(root, 'workspace');
const socket = join(root, 'magid.sock');
const store = join(root, 'app-state', 'executor.json');
const journal = join(root, 'app-state', 'journal.jsonl');
mkdirSync(home, { mode: 0o700 });
mkdirSync(join(root, 'app-state'), { mode: 0o700 });
writeWorkspace(workspace);

/** Runs demo/crash-app.ts; `until(step)` resolves with the first line of that step. */
function runApp(mode: 'start' | 'restart') {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'demo/crash-app.ts', mode, socket, home, workspace, store, journal],
    { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const steps: Array<Record<string, unknown>> = [];
  let wake = () => {};
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    steps.push(parsed);
    if (parsed.step === 'handler_ran') report.step(`handler ran find_note ${JSON.stringify(parsed.args)}`);
    wake();
  });
  const exited = once(child, 'exit');
  const until = async (step: string): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = steps.find((line) => line.step === step);
      if (found) return found;
      const woken = new Promise<boolean>((resolve) => (wake = () => resolve(false)));
      if (await Promise.race([woken, exited.then(() => true)])) {
        const late = steps.find((line) => line.step === step);
        if (late) return late;
        throw new Error(`the application exited before ${step}`);
      }
    }
  };
  return { child, until };
}

let ok = false;
const provider = await startScriptedProvider();
const daemon = await MagiClient.connect({
  home,
  socket,
  launch: true,
  serveArgs: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
});
try {
  process.stdout.write('magi crash demo\n');
  report.step(`magid ready (pid ${daemon.launched?.pid})`);

  const first = runApp('start');
  await first.until('handler_ran');
  first.child.kill('SIGKILL');
  await once(first.child, 'exit');
  report.step('application killed with SIGKILL while its handler ran (the result never reached the daemon)');

  const second = runApp('restart');
  const resumed = await second.until('resumed');
  report.step(`application started again: executor resumed at generation ${resumed.generation}`);
  const done = (await second.until('done')) as {
    terminal: Parameters<typeof report.outcome>[0];
    calls: Parameters<typeof report.calls>[0];
  };
  await once(second.child, 'exit');
  const runs = readFileSync(journal, 'utf8').trim().split('\n').length;
  report.transcript('Where is my note about tea?', done.terminal);
  report.calls(done.calls, Number(resumed.generation));
  report.heading(`The handler ran ${runs === 1 ? 'once' : `${runs} times`}.`);
  report.outcome(done.terminal);
  ok = done.terminal.status === 'completed' && runs === 1 && done.calls[0]?.status === 'succeeded';
} catch (error) {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  daemon.close();
  await daemon.launched?.stop();
  await provider.close();
  rmSync(root, { recursive: true, force: true });
}
process.stdout.write(ok ? 'magid stopped; temporary home removed\n' : 'demo failed\n');
process.exitCode = ok ? 0 : 1;
