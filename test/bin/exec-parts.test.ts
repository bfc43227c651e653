import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { CallBook, callHash } from '../../bin/exec/call-book.js';
import { HumanView, JsonView } from '../../bin/exec/event-view.js';
import { parseDuration } from '../../bin/exec/exec-command.js';
import { ExecFailure, failureOf, UsageError } from '../../bin/exec/exec-errors.js';
import { ExecOutput } from '../../bin/exec/exec-output.js';
import { exitOf } from '../../bin/exec/follow-turn.js';
import { Interrupts } from '../../bin/exec/interrupts.js';
import { readPrompt, titleOf } from '../../bin/exec/prompt.js';
import { ERASE_LINE, elapsedText, StatusLine } from '../../bin/exec/status-line.js';
import { painter } from '../../bin/exec/styles.js';
import type { ReplayRecord } from '../../bin/history-pages.js';
import { localMinute, sessionTable } from '../../bin/sessions.js';
import { Transcript } from '../../bin/transcript.js';
import type { TerminalPayload, TurnEvent } from '../../client/index.js';
import { WireCallError } from '../../client/index.js';
import { fakeClock } from '../helpers/fake-clock.js';

/** A stream that keeps what was written to it, as a terminal or as a pipe. */
function sink(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY, columns: 40, text: '' });
  stream.on('data', (bytes: Buffer) => {
    stream.text += bytes.toString();
  });
  return stream;
}

const plain = painter(false);

t.test('durations: seconds by default, ms, s, m and h, positive and at most a day', async (t) => {
  t.equal(parseDuration('90'), 90_000);
  t.equal(parseDuration('1500ms'), 1_500);
  t.equal(parseDuration('2.5s'), 2_500);
  t.equal(parseDuration('2m'), 120_000);
  t.equal(parseDuration('24h'), 86_400_000);
  for (const bad of ['0', '25h', 'soon', '-1', '1d', '', '1e3']) t.throws(() => parseDuration(bad), bad);
});

t.test('the prompt: the argument, stdin, or both; never empty or too long', async (t) => {
  const piped = (text: string) => Object.assign(PassThrough.from([text]), { isTTY: false });
  const terminal = Object.assign(new PassThrough(), { isTTY: true });
  t.equal(await readPrompt({ argument: 'hi', stdin: terminal }), 'hi', 'a terminal is never read');
  t.equal(await readPrompt({ argument: undefined, stdin: piped('from stdin') }), 'from stdin');
  t.equal(await readPrompt({ argument: '-', stdin: piped('dash') }), 'dash');
  t.equal(await readPrompt({ argument: 'review', stdin: piped('diff\n') }), 'review\n\ndiff\n');
  t.equal(await readPrompt({ argument: 'alone', stdin: piped('  \n') }), 'alone', 'blank stdin adds nothing');
  await t.rejects(readPrompt({ argument: undefined, stdin: terminal }), UsageError);
  await t.rejects(readPrompt({ argument: '-', stdin: piped('') }), { message: 'the prompt is empty' });
  await t.rejects(readPrompt({ argument: 'x'.repeat(40_000), stdin: terminal }), /the prompt is too long/);
  t.equal(titleOf('  First line\nsecond'), 'First line');
  t.equal([...titleOf('é'.repeat(100))].length, 80);
});

t.test(
  'the status line: drawn each tick, kept to one row, erased before output and when stopped',
  async (t) => {
    const clock = fakeClock();
    const stream = sink(true);
    let canDraw = true;
    const status = new StatusLine(stream, clock, plain, () => canDraw);
    status.start();
    t.equal(stream.text, `${ERASE_LINE}⠋ 0s starting`);
    status.label = 'read_file';
    clock.advance(1_100);
    t.ok(stream.text.endsWith(`${ERASE_LINE}⠙ 1s read_file`), 'a frame every 100 ms');
    status.label = 'a very long label that cannot fit into forty columns at all';
    clock.advance(100);
    const last = stream.text.split(ERASE_LINE).at(-1)!;
    t.equal([...last].length, 39, 'one row of a 40-column terminal');
    t.ok(last.endsWith('…'));
    canDraw = false;
    status.clear();
    const before = stream.text;
    clock.advance(500);
    t.equal(stream.text, before, 'nothing drawn while the answer is mid-line');
    canDraw = true;
    clock.advance(100);
    t.ok(status.shown);
    status.stop();
    t.ok(stream.text.endsWith(ERASE_LINE), 'erased at the end');
    clock.advance(1_000);
    t.ok(stream.text.endsWith(ERASE_LINE), 'never drawn again');
    t.equal(elapsedText(65_000), '1m 05s');
  },
);

t.test(
  'output on one terminal: a note never lands mid-answer; on pipes the streams stay apart',
  async (t) => {
    const stdout = sink(true);
    const stderr = sink(true);
    const output = new ExecOutput({ stdout, stderr }, plain);
    output.answer('partial');
    t.notOk(output.canDrawStatus());
    output.note('→ read_file');
    t.equal(stdout.text, 'partial\n', 'the answer’s line was ended first');
    t.ok(output.canDrawStatus());
    output.answer('more');
    output.endAnswerLine();
    output.endAnswerLine();
    t.equal(stdout.text, 'partial\nmore\n');

    const out = sink(false);
    const err = sink(false);
    const piped = new ExecOutput({ stdout: out, stderr: err }, plain);
    piped.answer('partial');
    piped.note('a note');
    t.equal(out.text, 'partial');
    t.equal(err.text, 'a note\n');
    t.ok(piped.canDrawStatus());
    out.emit('error', Object.assign(new Error('EPIPE'), { code: 'EPIPE' }));
    piped.answer('lost');
    piped.json({ dropped: true });
    t.equal(out.text, 'partial', 'a reader that went away is not written to');
  },
);

const record = (sequence: number, kind: string, data: Record<string, unknown> | null): ReplayRecord => ({
  sequence,
  kind,
  created_at: 0,
  data,
  omitted: data === null,
});

t.test('the call book names a call from the history, reading only what was written since', async (t) => {
  const history = [record(0, 'turn.user', { prompt: 'go' })];
  const cursors: Array<string | null> = [];
  const book = new CallBook(async (cursor) => {
    cursors.push(cursor);
    const from = cursor === null ? 0 : Number(cursor);
    const items = history.slice(from, from + 2);
    return { items, next_cursor: from + 2 < history.length ? String(from + 2) : null };
  });
  t.equal(await book.find(callHash('call_a'), false), null);
  history.push(record(1, 'turn.call', { call_id: 'call_a', name: 'read_file' }));
  history.push(
    record(2, 'turn.call', { call_id: 'call_b', name: 'list_directory', parent_call_id: 'call_a' }),
  );
  t.same(await book.find(callHash('call_a'), false), { name: 'read_file', parent: null, outcome: null });
  t.same(await book.find(callHash('call_b'), false), {
    name: 'list_directory',
    parent: callHash('call_a'),
    outcome: null,
  });
  history.push(record(3, 'turn.call_result', { call_id: 'call_a', outcome: { status: 'success' } }));
  t.same((await book.find(callHash('call_a'), true))?.outcome, { status: 'success' });
  t.same(cursors, [null, null, '2', '2'], 'each read starts at the last page read');
  t.equal(callHash('call_a').length, 16);
});

function event<Name extends TurnEvent['event']>(
  name: Name,
  payload: Extract<TurnEvent, { event: Name }>['payload'],
): TurnEvent {
  return {
    event: name,
    session_id: 's',
    operation_id: 'o',
    grant_generation: 1,
    sequence: 0,
    payload,
  } as TurnEvent;
}

t.test('the human view: answer on stdout, one line per call, plan and subagent call on stderr', async (t) => {
  const stdout = sink(false);
  const stderr = sink(false);
  const output = new ExecOutput({ stdout, stderr }, plain);
  const calls = new Map([
    ['aaaaaaaaaaaaaaaa', { name: 'run_command', parent: null, outcome: null }],
    [
      'bbbbbbbbbbbbbbbb',
      {
        name: 'run_command',
        parent: null,
        outcome: { status: 'error', code: 'exit_status', message: 'exit 2' },
      },
    ],
    ['cccccccccccccccc', { name: 'read_file', parent: 'dddddddddddddddd', outcome: { status: 'success' } }],
  ]);
  const book = { find: async (hash: string) => calls.get(hash) ?? null } as unknown as CallBook;
  const view = new HumanView(output, book, null);
  const activity = (value: Record<string, unknown>) =>
    view.show(event('turn.activity', { turn_id: 't', activity: value as never }));
  await view.show(event('turn.started', { turn_id: 't' }));
  await activity({ kind: 'reasoning' });
  await activity({ kind: 'tool_call', call: 'aaaaaaaaaaaaaaaa', status: 'pending' });
  await activity({ kind: 'tool_call', call: 'aaaaaaaaaaaaaaaa', status: 'succeeded' });
  await activity({ kind: 'tool_call', call: 'bbbbbbbbbbbbbbbb', status: 'failed' });
  await activity({
    kind: 'tool_call',
    call: 'cccccccccccccccc',
    status: 'succeeded',
    parent: 'dddddddddddddddd',
  });
  await activity({ kind: 'tool_call', call: 'eeeeeeeeeeeeeeee', status: 'pending' });
  await activity({
    kind: 'plan',
    steps: [
      { step: 'look', status: 'completed' },
      { step: 'fix', status: 'in_progress' },
      { step: 'test', status: 'pending' },
    ],
  });
  await view.show(event('turn.assistant_delta', { turn_id: 't', delta: 'Done.' }));
  t.equal(stdout.text, 'Done.');
  t.equal(
    stderr.text,
    [
      '→ run_command',
      '✓ run_command',
      '✗ run_command: exit_status: exit 2',
      '  ✓ read_file (subagent)',
      '→ call eeeeeeeeeeeeeeee',
      'plan: ✓ look  ▸ fix  ○ test',
      '',
    ].join('\n'),
  );

  const json = sink(false);
  const frame = event('turn.started', { turn_id: 't' });
  await new JsonView(new ExecOutput({ stdout: json, stderr }, plain)).show(frame);
  t.same(JSON.parse(json.text), frame);
});

t.test(
  'Ctrl-C: the first press does what is set, the second leaves; with nothing set it leaves',
  async (t) => {
    const target = new EventEmitter();
    let left = 0;
    let stopped = 0;
    const interrupts = new Interrupts(() => {
      left += 1;
    });
    const stop = interrupts.listen(target);
    interrupts.onFirst(() => {
      stopped += 1;
    });
    target.emit('SIGINT');
    t.same([stopped, left], [1, 0]);
    target.emit('SIGINT');
    t.same([stopped, left], [1, 1]);
    t.ok(interrupts.pressed);
    stop();
    t.equal(target.listenerCount('SIGINT'), 0);
    const early = new Interrupts(() => {
      left += 1;
    });
    early.listen(target);
    target.emit('SIGINT');
    t.equal(left, 2, 'nothing to stop yet: it leaves at once');
  },
);

t.test('exit statuses and reasons', async (t) => {
  const terminal = (status: TerminalPayload['status'], error: TerminalPayload['error'] = null) =>
    ({ turn_id: 't', status, error, assistant_text: '', activity_dropped: 0 }) as TerminalPayload;
  const end = (status: TerminalPayload['status'], extra = {}) => ({
    terminal: terminal(
      status,
      status === 'failed' ? { code: 'provider_error', message: 'the model provider failed' } : null,
    ),
    stoppedByUser: false,
    timedOut: false,
    ...extra,
  });
  t.same(exitOf(end('completed'), undefined), { status: 0, reason: null });
  t.same(exitOf(end('completed', { stoppedByUser: true }), undefined), { status: 0, reason: null });
  t.same(exitOf(end('failed'), undefined), {
    status: 1,
    reason: 'the turn failed: provider_error: the model provider failed',
  });
  t.same(exitOf(end('cancelled', { stoppedByUser: true }), undefined), {
    status: 130,
    reason: 'the turn was stopped',
  });
  t.same(exitOf(end('cancelled', { timedOut: true }), 90_000), {
    status: 1,
    reason: 'the turn did not end within 1m 30s; it was stopped',
  });
  t.same(exitOf(end('cancelled'), undefined), { status: 1, reason: 'the turn was cancelled' });
  t.same(failureOf(new UsageError('bad')), { message: 'bad', status: 2 });
  t.same(failureOf(new ExecFailure('lost')), { message: 'lost', status: 1 });
  t.same(
    failureOf(new WireCallError('turn.start', 'session_busy', 'a turn is already active in the session')),
    {
      message: 'the daemon refused turn.start: session_busy: a turn is already active in the session',
      status: 2,
    },
  );
});

t.test(
  'the transcript: prompts, calls with their outcome, plan, answer and how the turn ended',
  async (t) => {
    const lines: string[] = [];
    const transcript = new Transcript((line) => lines.push(line));
    const records = [
      record(0, 'session.created', { title: 'x' }),
      record(1, 'turn.user', { prompt: 'two\nlines' }),
      record(2, 'turn.call', { call_id: 'c1', name: 'read_file' }),
      record(3, 'turn.call_result', { call_id: 'c1', outcome: { status: 'success' } }),
      record(4, 'turn.call', { call_id: 'c2', name: 'write_file', parent_call_id: 'c0' }),
      record(5, 'turn.call_result', {
        call_id: 'c2',
        outcome: { status: 'error', code: 'not_permitted', message: 'no' },
      }),
      record(6, 'turn.call', { call_id: 'c3', name: 'run_command' }),
      record(7, 'turn.terminal', {
        status: 'failed',
        error: { code: 'interrupted', message: 'the daemon stopped while the turn was active' },
        assistant_text: 'Half.',
        calls: [{ call_id: 'c3', tool: 'run_command', status: 'failed', external_effects: 'uncertain' }],
        plan: [{ step: 'read', status: 'completed' }],
      }),
      record(8, 'turn.user', null),
      record(9, 'session.closed', {}),
    ];
    for (const each of records) transcript.add(each);
    t.same(lines, [
      '> two',
      '> lines',
      '✓ read_file',
      '  ✗ write_file (subagent): not_permitted: no',
      '✗ run_command: failed, effects uncertain',
      'plan: ✓ read',
      'Half.',
      '[failed: interrupted: the daemon stopped while the turn was active]',
      '(a turn.user record too large to replay)',
      '(session closed)',
    ]);
  },
);

t.test('the sessions table', async (t) => {
  const at = new Date(2026, 0, 31, 9, 5).getTime();
  t.equal(localMinute(at), '2026-01-31 09:05');
  t.same(
    sessionTable([
      {
        session_id: 'ses_a',
        title: 'A title\nsplit',
        workspace: '/w',
        created_at: at,
        updated_at: at,
        claimed: true,
      },
      { session_id: 'ses_bb', title: null, workspace: '/x', created_at: at, updated_at: at, claimed: false },
    ]),
    [
      'SESSION  UPDATED           CLAIMED  TITLE          WORKSPACE',
      'ses_a    2026-01-31 09:05  yes      A title split  /w',
      'ses_bb   2026-01-31 09:05  no                      /x',
    ],
  );
});
