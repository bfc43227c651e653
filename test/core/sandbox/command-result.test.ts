import t from 'tap';
import { commandResultText } from '../../../core/sandbox/command-sandbox.js';

t.test('the model receives compact JSON with snake_case fields in a fixed order', async (t) => {
  const text = commandResultText({
    exitCode: 2,
    signal: null,
    timedOut: false,
    cancelled: false,
    output: 'ls: cannot access "x"\n',
    truncated: false,
    outputBytes: 22,
  });
  t.equal(
    text,
    '{"exit_code":2,"signal":null,"timed_out":false,"cancelled":false,"output":"ls: cannot access \\"x\\"\\n","truncated":false,"output_bytes":22}',
  );
  t.same(JSON.parse(text).output, 'ls: cannot access "x"\n', 'the output survives a round trip');
});

t.test('a killed command reports its signal and why', async (t) => {
  const text = commandResultText({
    exitCode: null,
    signal: 'SIGKILL',
    timedOut: true,
    cancelled: false,
    output: 'ab',
    truncated: true,
    outputBytes: 70_000,
  });
  t.same(JSON.parse(text), {
    exit_code: null,
    signal: 'SIGKILL',
    timed_out: true,
    cancelled: false,
    output: 'ab',
    truncated: true,
    output_bytes: 70_000,
  });
});
