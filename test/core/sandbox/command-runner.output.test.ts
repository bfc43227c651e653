import t from 'tap';
import { CommandSandbox } from '../../../core/sandbox/command-sandbox.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { bwrap, neverAborted, rootDirectory, sandboxUnavailable } from '../../helpers/sandbox-machine.js';

const skip = sandboxUnavailable ?? false;

async function run(
  t: { teardown(fn: () => unknown): void },
  command: string,
  outputBytes?: number,
): ReturnType<CommandSandbox['run']> {
  const commands = new CommandSandbox({ bwrap: bwrap!, clock: fakeClock(), hiddenPaths: [], outputBytes });
  t.teardown(() => commands.close());
  return commands.run({
    command,
    workspace: await rootDirectory(t),
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
}

t.test('output over the bound is cut, says so, and counts the whole', { skip }, async (t) => {
  const outcome = await run(t, "head -c 20000 /dev/zero | tr '\\0' a");
  t.equal(outcome.output, 'a'.repeat(16_384), 'the first 16 KiB by default');
  t.equal(outcome.truncated, true);
  t.equal(outcome.outputBytes, 20_000);
  t.equal(outcome.exitCode, 0);
});

t.test('the cut falls on a character boundary', { skip }, async (t) => {
  // 'abcd' then 'é' (two bytes) straddling the five-byte bound.
  const outcome = await run(t, "printf 'abcd\\303\\251xyz'", 5);
  t.same(
    { output: outcome.output, truncated: outcome.truncated, outputBytes: outcome.outputBytes },
    { output: 'abcd', truncated: true, outputBytes: 9 },
  );
});

t.test('stdout and stderr arrive in one stream, in order', { skip }, async (t) => {
  const outcome = await run(t, 'echo out; sleep 0.3; echo err >&2; sleep 0.3; echo out again');
  t.equal(outcome.output, 'out\nerr\nout again\n');
  t.equal(outcome.truncated, false);
});

t.test('a command printing megabytes on both pipes runs to its end', { skip }, async (t) => {
  const outcome = await run(
    t,
    'head -c 3000000 /dev/zero >&2 & head -c 3000000 /dev/zero; wait; echo finished >&2',
  );
  t.equal(outcome.exitCode, 0, 'it finished rather than blocking on a full pipe');
  t.equal(outcome.outputBytes, 6_000_009, 'every byte of both pipes is counted');
  t.equal(outcome.truncated, true);
  t.equal(Buffer.byteLength(outcome.output), 16_384);
});
