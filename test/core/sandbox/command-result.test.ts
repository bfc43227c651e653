import t from 'tap';
import { COMMAND_LIMITS } from '../../../core/sandbox/command-limits.js';
import { commandResultText } from '../../../core/sandbox/command-result.js';
import type { CommandOutcome } from '../../../core/sandbox/command-runner.js';

function outcome(overrides: Partial<CommandOutcome> = {}): CommandOutcome {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    queueTimedOut: false,
    cancelled: false,
    output: '',
    truncated: false,
    stdoutBytes: 0,
    stderrBytes: 0,
    ...overrides,
  };
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

t.test('the model receives compact JSON with snake_case fields in a fixed order', async (t) => {
  const text = commandResultText(
    outcome({ exitCode: 2, output: 'ls: cannot access "x"\n', stdoutBytes: 0, stderrBytes: 22 }),
  );
  t.equal(
    text,
    '{"exit_code":2,"signal":null,"timed_out":false,"queue_timed_out":false,"cancelled":false,"output":"ls: cannot access \\"x\\"\\n","truncated":false,"stdout_bytes":0,"stderr_bytes":22}',
  );
  t.same(JSON.parse(text).output, 'ls: cannot access "x"\n', 'the output survives a round trip');
});

t.test('a killed command reports its signal and why', async (t) => {
  const text = commandResultText(
    outcome({
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: true,
      output: 'ab',
      truncated: true,
      stdoutBytes: 70_000,
      stderrBytes: 5,
    }),
  );
  t.same(JSON.parse(text), {
    exit_code: null,
    signal: 'SIGKILL',
    timed_out: true,
    queue_timed_out: false,
    cancelled: false,
    output: 'ab',
    truncated: true,
    stdout_bytes: 70_000,
    stderr_bytes: 5,
  });
});

t.test('a command whose time passed before it could start says so apart from one that ran out', async (t) => {
  t.same(JSON.parse(commandResultText(outcome({ exitCode: null, queueTimedOut: true }))), {
    exit_code: null,
    signal: null,
    timed_out: false,
    queue_timed_out: true,
    cancelled: false,
    output: '',
    truncated: false,
    stdout_bytes: 0,
    stderr_bytes: 0,
  });
});

t.test('the result fits its bound by its encoded size, whatever the output holds', async (t) => {
  const limit = COMMAND_LIMITS.result_bytes;
  for (const [name, unit] of [
    ['quotes', '"'],
    ['backslashes', '\\'],
    ['newlines', '\n'],
    ['control bytes', '\u0001'],
    ['non-ASCII', 'é€😀'],
    ['a mix', 'a"\\\n\u001f\u007fé'],
  ] as const) {
    const output = unit.repeat(Math.ceil(COMMAND_LIMITS.output_bytes / bytes(unit)));
    const text = commandResultText(
      outcome({ exitCode: 3, output, stdoutBytes: 123_456_789, stderrBytes: 987_654_321 }),
    );
    const parsed = JSON.parse(text);
    t.ok(bytes(text) <= limit, `${name}: ${bytes(text)} bytes`);
    t.ok(bytes(text) > limit - 8, `${name}: the bound is used, not left half empty`);
    t.equal(parsed.truncated, true, `${name}: cut, and says so`);
    t.ok(output.startsWith(parsed.output), `${name}: the beginning is kept`);
    t.ok(parsed.output.length > 0, `${name}: something of it`);
    t.same(
      [parsed.exit_code, parsed.stdout_bytes, parsed.stderr_bytes],
      [3, 123_456_789, 987_654_321],
      `${name}: the exit code and both sizes are always there`,
    );
  }
});

t.test('at the bound and one byte past it', async (t) => {
  const limit = COMMAND_LIMITS.result_bytes;
  const frame = bytes(commandResultText(outcome()));
  const fitting = 'x'.repeat(limit - frame);
  const whole = commandResultText(outcome({ output: fitting }));
  t.equal(bytes(whole), limit, 'exactly the bound');
  t.equal(JSON.parse(whole).output, fitting);
  t.equal(JSON.parse(whole).truncated, false);

  const over = commandResultText(outcome({ output: `${fitting}x` }));
  t.ok(bytes(over) <= limit);
  t.equal(JSON.parse(over).truncated, true, 'one byte past it is cut');
  t.ok(fitting.startsWith(JSON.parse(over).output));

  const escaped = commandResultText(outcome({ output: `${fitting.slice(1)}\n` }));
  t.ok(bytes(escaped) <= limit, 'a newline takes two bytes encoded');
  t.equal(JSON.parse(escaped).truncated, true);
  t.notOk(JSON.parse(escaped).output.endsWith('\n'));
});

t.test('output already cut by the collector stays marked truncated', async (t) => {
  t.equal(JSON.parse(commandResultText(outcome({ output: 'short', truncated: true }))).truncated, true);
});
