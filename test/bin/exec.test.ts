import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isAlive } from '../../config/daemon-record.js';
import { schemaViolation } from '../helpers/wire-schema.js';
import {
  daemonPid,
  magid,
  runMagidIn,
  saidOnStderr,
  scene,
  serveHome,
  stopLaunchedOnTeardown,
  terminalStatus,
  userMessages,
  wireTo,
} from './exec-fixture.js';

// Every command starts from the TypeScript sources, and so do the daemons.
t.setTimeout(240_000);

const READ_NOTES = [{ id: 'c1', name: 'read_file', arguments: '{"path":"notes.md"}' }];

t.test('a turn with a built-in tool call: the answer on stdout, the call on stderr, exit 0', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.replyToolCalls(READ_NOTES);
  provider.reply(['It says ', 'tea is green.']);
  const run = await magid(t, ['exec', '--home', home, 'What does notes.md say?'], { cwd: workspace });
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, 'It says tea is green.\n');
  t.match(run.stderr, /^session ses_\S+ · .*\/ws\n→ read_file\n✓ read_file\n$/);
  t.same(userMessages(provider, 0), ['What does notes.md say?']);
  const tool = provider.requests[1]!.body.messages.find(
    (message: { role: string }) => message.role === 'tool',
  );
  t.match(tool.content, 'Tea is green.', 'the daemon read the file of the current directory');
  t.equal(provider.unexpected, 0, 'no title was asked for: the session is titled after the prompt');

  const sessions = await magid(t, ['sessions', '--home', home, '--json'], { cwd: workspace });
  t.equal(sessions.code, 0);
  t.match(JSON.parse(sessions.stdout), { title: 'What does notes.md say?', workspace });
});

t.test('an answer with no tool, the prompt from stdin, and stdin appended to an argument', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.reply(['Hello.']);
  provider.reply(['Reviewed.']);
  const piped = await magid(t, ['exec', '--home', home], { cwd: workspace, input: 'hi there\n' });
  t.equal(piped.code, 0, piped.stderr);
  t.equal(piped.stdout, 'Hello.\n');
  t.notMatch(piped.stderr, /→|✓/, 'no tool line');
  t.same(userMessages(provider, 0), ['hi there\n']);

  const both = await magid(t, ['exec', '--home', home, 'review this'], {
    cwd: workspace,
    input: '+a line\n',
  });
  t.equal(both.code, 0, both.stderr);
  t.same(userMessages(provider, 1), ['review this\n\n+a line\n']);
});

t.test('--json: every event as one JSON line, each a frame of docs/protocol.schema.json', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.replyToolCalls(READ_NOTES);
  provider.reply(['Green.']);
  const run = await magid(t, ['exec', '--home', home, '--json', 'What does notes.md say?'], {
    cwd: workspace,
  });
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stderr, '', 'nothing on stderr when all went well');
  const frames = run.stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { event: string; sequence: number; payload: Record<string, unknown> });
  for (const frame of frames) t.equal(schemaViolation(`${frame.event}.event`, frame), null, frame.event);
  t.same(
    frames.map((frame) => frame.sequence),
    frames.map((_, index) => index),
    'every event, in order',
  );
  t.equal(frames[0]!.event, 'turn.started');
  t.match(frames.at(-1), {
    event: 'turn.terminal',
    payload: { status: 'completed', assistant_text: 'Green.' },
  });
  t.ok(frames.some((frame) => frame.event === 'turn.activity'));
});

t.test('--session continues a session: its earlier turn is the model’s context', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.reply(['First answer.']);
  provider.reply(['Second answer.']);
  const first = await magid(t, ['exec', '--home', home, 'first question'], { cwd: workspace });
  const session = /session (ses_\S+)/.exec(first.stderr)![1]!;
  const second = await magid(t, ['exec', '--home', home, '--session', session, 'second question'], {
    cwd: '/',
  });
  t.equal(second.code, 0, second.stderr);
  t.equal(second.stdout, 'Second answer.\n');
  t.match(second.stderr, `session ${session} · ${workspace}`, 'in the session’s own workspace');
  const messages = provider.requests[1]!.body.messages as Array<{ role: string; content: string }>;
  t.match(
    messages.filter((message) => message.role !== 'system'),
    [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'First answer.' },
      { role: 'user', content: 'second question' },
    ],
  );

  const replay = await magid(t, ['replay', '--home', home, session], { cwd: workspace });
  t.equal(replay.code, 0, replay.stderr);
  t.equal(replay.stdout, '> first question\nFirst answer.\n\n> second question\nSecond answer.\n');
});

t.test('exit statuses: 1 failed, 2 refused or bad usage, with the reason on stderr', async (t) => {
  const { root, home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.replyStatus(400);
  const failed = await magid(t, ['exec', '--home', home, 'fail please'], { cwd: workspace });
  t.equal(failed.code, 1);
  t.match(failed.stderr, /magid: the turn failed: provider_error: the model provider failed\n$/);

  const missing = join(root, 'nowhere');
  const refused = await magid(t, ['exec', '--home', home, '--workspace', missing, 'hi'], { cwd: workspace });
  t.equal(refused.code, 2);
  t.match(
    refused.stderr,
    `magid: the workspace ${missing} was refused: the workspace must be an existing directory\n`,
  );

  const unknown = await magid(t, ['exec', '--home', home, '--session', 'ses_none', 'hi'], { cwd: workspace });
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, 'magid: no session ses_none');

  for (const args of [['--timeout', 'soon', 'hi'], ['--no-such-flag', 'hi'], []]) {
    const usage = await magid(t, ['exec', '--home', home, ...args], { cwd: workspace, input: '' });
    t.equal(usage.code, 2, `bad usage: ${args.join(' ')}`);
    t.match(usage.stderr, /error|magid: the prompt is empty/);
  }
  t.equal(provider.requests.length, 1, 'nothing refused reached the model');
});

t.test('--timeout stops a turn still running; --output-last-message keeps the final answer', async (t) => {
  const { root, home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.reply(['Kept.']);
  const file = join(root, 'last.txt');
  const kept = await magid(t, ['exec', '--home', home, '-o', file, 'answer'], { cwd: workspace });
  t.equal(kept.code, 0, kept.stderr);
  t.equal(readFileSync(file, 'utf8'), 'Kept.');

  const hold = provider.hold();
  provider.script({
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    steps: [
      {
        kind: 'write',
        bytes: Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"So far"}}]}\n\n'),
      },
      hold,
    ],
  });
  const slow = await magid(t, ['exec', '--home', home, '--timeout', '1500ms', '-o', file, 'take long'], {
    cwd: workspace,
  });
  t.equal(slow.code, 1);
  t.match(slow.stderr, /magid: the turn did not end within 1s; it was stopped\n$/);
  t.equal(slow.stdout, 'So far\n');
  t.equal(readFileSync(file, 'utf8'), 'So far', 'the answer as it was when the turn was stopped');
});

t.test('with no daemon listening, exec starts one, says so, and passes it the provider', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  stopLaunchedOnTeardown(t, home);
  provider.reply(['Started.']);
  t.notOk(existsSync(join(home, 'run', 'daemon.json')));
  const run = await magid(t, ['exec', '--home', home, ...providerArgs, 'hello'], { cwd: workspace });
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, 'Started.\n');
  const pid = daemonPid(home);
  t.match(
    run.stderr,
    `magid: no daemon was listening for ${home}; started one (pid ${pid}), which stops after 10 minutes without work\n`,
  );
  t.ok(isAlive(pid), 'the daemon outlives the command');
  t.equal(provider.requests[0]!.body.model, 'scripted-model');

  provider.reply(['Again.']);
  const again = await magid(
    t,
    ['exec', '--home', home, '--provider-base-url', 'http://127.0.0.1:9/v1', 'hi'],
    {
      cwd: workspace,
    },
  );
  t.equal(again.code, 0, again.stderr);
  t.match(again.stderr, 'warning: --provider-base-url applies only to a daemon this command starts');
  t.equal(daemonPid(home), pid, 'the same daemon answered');
});

t.test('--model runs this turn with that model and puts the workspace’s setting back', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.replyModels({ object: 'list', data: [{ id: 'other-model', object: 'model' }] });
  provider.reply(['From the other model.']);
  provider.reply(['From the default.']);
  const run = await magid(t, ['exec', '--home', home, '--model', 'other-model', 'hi'], { cwd: workspace });
  t.equal(run.code, 0, run.stderr);
  const chat = provider.requests.filter((request) => request.method === 'POST');
  t.equal(chat[0]!.body.model, 'other-model');
  const client = await wireTo(t, home);
  const settings = await client.call('settings.get', { workspace });
  t.match(settings, { project: { model: null }, effective: { model: 'scripted-model' } }, 'no pin is left');
  const next = await magid(t, ['exec', '--home', home, 'hi again'], { cwd: workspace });
  t.equal(next.code, 0, next.stderr);
  t.equal(provider.requests.filter((request) => request.method === 'POST')[1]!.body.model, 'scripted-model');
});

t.test('a second Ctrl-C leaves at once; the turn still ends, cancelled', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  const daemon = await serveHome(t, home, providerArgs);
  const hold = provider.hold();
  provider.script({ status: 200, headers: { 'content-type': 'text/event-stream' }, steps: [hold] });
  const run = runMagidIn(t, ['exec', '--home', home, 'wait'], { cwd: workspace });
  await hold.reached;
  // A frozen daemon cannot end the turn: only the second Ctrl-C can end the command.
  daemon.magid.child.kill('SIGSTOP');
  t.teardown(() => daemon.magid.child.kill('SIGCONT'));
  run.child.kill('SIGINT');
  await saidOnStderr(run, 'stopping the turn (Ctrl-C again leaves at once)');
  run.child.kill('SIGINT');
  const exit = await run.waitExit();
  t.equal(exit.code, 130);
  t.match(run.stderr, /magid: left at once\n$/);
  daemon.magid.child.kill('SIGCONT');
  const session = /session (ses_\S+)/.exec(run.stderr)![1]!;
  t.equal(
    await terminalStatus(await wireTo(t, home), session),
    'cancelled',
    'the stop sent before leaving took effect',
  );
});
