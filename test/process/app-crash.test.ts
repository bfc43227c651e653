import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';
import { PROJECT_ROOT, shortTempDir, startDaemon } from './spawn-daemon.js';

// A daemon and two application processes per test, each starting in a few seconds.
t.setTimeout(120_000);

const APP = join(PROJECT_ROOT, 'test/process/fixtures/crash-app.mjs');

interface App {
  child: ChildProcess;
  /** Resolves with the first stdout line whose `step` is `step`. */
  step(step: string): Promise<Record<string, unknown>>;
}

/** The application (test/process/fixtures/crash-app.mjs), run as a user runs it: plain node, no hooks. */
function app(t: Test, args: string[]): App {
  const child = spawn('env', [...WITHOUT_TEST_HOOKS, APP, ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  let buffered = '';
  child.stdout!.on('data', (bytes: Buffer) => {
    buffered += bytes.toString('utf8');
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      lines.push(JSON.parse(buffered.slice(0, end)));
      buffered = buffered.slice(end + 1);
    }
    for (const wake of waiters) wake();
  });
  const exited = once(child, 'exit');
  return {
    child,
    async step(step) {
      for (;;) {
        const line = lines.find((entry) => entry.step === step);
        if (line) return line;
        const woken = new Promise<void>((resolve) => waiters.add(resolve));
        const ended = await Promise.race([woken.then(() => false), exited.then(() => true)]);
        if (ended && !lines.some((entry) => entry.step === step)) {
          throw new Error(`the application exited before "${step}": ${JSON.stringify(lines)}`);
        }
      }
    },
  };
}

for (const moment of ['handler', 'outcome_kept'] as const) {
  t.test(
    `an application killed with SIGKILL ${moment === 'handler' ? 'while its handler runs' : 'after its outcome was kept, before it was sent'} resumes from its file store; the call completes once`,
    async (t) => {
      const root = shortTempDir(t);
      const home = join(root, 'home');
      const socket = join(root, 'd.sock');
      const workspace = join(root, 'ws');
      mkdirSync(workspace);
      const store = join(root, 'app', 'executor.json');
      const effects = join(root, 'effects.jsonl');
      const provider = await ScriptedProvider.start(t);
      provider.replyToolCalls([{ id: 'c1', name: 'note', arguments: '{"text":"tea"}' }]).reply(['Saved.']);
      await startDaemon(t, {
        socket,
        home,
        args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
      });
      const args = [socket, home, workspace, store, effects];

      const first = app(t, ['start', ...args, moment]);
      await first.step(moment === 'handler' ? 'handler_running' : 'outcome_kept');
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
      t.equal(statSync(store).mode & 0o777, 0o600, 'the executor was kept in a private file');
      t.match(JSON.parse(readFileSync(store, 'utf8')), {
        calls: [{ name: 'note', arguments: { text: 'tea' }, outcome: moment === 'handler' ? null : {} }],
      });

      const second = app(t, ['restart', ...args]);
      const done = await second.step('done');
      await once(second.child, 'exit');
      t.equal(second.child.exitCode, 0);
      t.match(done, {
        status: 'completed',
        text: 'Saved.',
        calls: [{ name: 'note', status: 'succeeded', external_effects: 'reported' }],
      });
      t.equal(
        readFileSync(effects, 'utf8').trim().split('\n').length,
        1,
        'the handler ran exactly once in both processes',
      );
      const continuation = provider.requests.at(-1)!;
      t.same(
        JSON.parse(continuation.body.messages.at(-1).content),
        { saved: 'tea' },
        'the model got the kept result',
      );
      t.equal(provider.unexpected, 0);
      t.notOk(existsSync(store), 'the released executor is no longer kept');
    },
  );
}

t.test(
  'after the daemon itself restarted, the application learns from the history that its turn was interrupted, and starts a new executor',
  async (t) => {
    const root = shortTempDir(t);
    const home = join(root, 'home');
    const socket = join(root, 'd.sock');
    const workspace = join(root, 'ws');
    mkdirSync(workspace);
    const store = join(root, 'app', 'executor.json');
    const effects = join(root, 'effects.jsonl');
    const provider = await ScriptedProvider.start(t);
    provider.replyToolCalls([{ id: 'c1', name: 'note', arguments: '{"text":"tea"}' }]);
    const serve = {
      socket,
      home,
      args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
    };
    const daemon = await startDaemon(t, serve);
    const args = [socket, home, workspace, store, effects];

    const first = app(t, ['start', ...args, 'handler']);
    const started = await first.step('turn_started');
    await first.step('handler_running');
    first.child.kill('SIGKILL');
    daemon.magid.child.kill('SIGKILL');
    await Promise.all([once(first.child, 'exit'), daemon.magid.exited]);
    const restarted = await startDaemon(t, serve);
    t.not(restarted.ready.instance_id, daemon.ready.instance_id, 'another instance of the daemon');

    const second = app(t, ['restart', ...args]);
    const gone = await second.step('executor_gone');
    await once(second.child, 'exit');
    t.equal(second.child.exitCode, 0);
    const interrupted = {
      turn_id: started.turn_id,
      status: 'failed',
      error: { code: 'interrupted', message: 'the daemon stopped while the turn was active' },
    };
    t.match(gone, {
      turns: [{ turn_id: started.turn_id, reported: interrupted, read: interrupted }],
      kept_executor: true,
    });
    t.notOk(existsSync(store), 'the new executor, released, is no longer kept');
  },
);
