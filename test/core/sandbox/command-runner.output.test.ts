import t from 'tap';
import { ownFolder } from '../../../core/confinement/confined-workspace.js';
import { COMMAND_LIMITS } from '../../../core/sandbox/command-limits.js';
import type { CommandSandbox } from '../../../core/sandbox/command-sandbox.js';
import {
  neverAborted,
  rootDirectory,
  sandboxUnavailable,
  testSandbox,
} from '../../helpers/sandbox-machine.js';

const skip = sandboxUnavailable ?? false;

/** One sandbox per output bound, shared by the checks of this file. */
const sandboxes = new Map<number, Promise<CommandSandbox>>();

async function run(command: string, outputBytes: number = COMMAND_LIMITS.output_bytes) {
  if (!sandboxes.has(outputBytes)) sandboxes.set(outputBytes, testSandbox(t, { outputBytes }));
  const commands = await sandboxes.get(outputBytes)!;
  return commands.run({
    command,
    workspace: ownFolder(await rootDirectory(t)),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
}

t.test('output over the bound is cut, says so, and counts each stream whole', { skip }, async (t) => {
  const outcome = await run("head -c 20000 /dev/zero | tr '\\0' a");
  t.equal(outcome.output, 'a'.repeat(COMMAND_LIMITS.output_bytes), 'the first 16 KiB by default');
  t.same(
    [outcome.truncated, outcome.stdoutBytes, outcome.stderrBytes, outcome.exitCode],
    [true, 20_000, 0, 0],
  );
  const exact = await run(`head -c ${COMMAND_LIMITS.output_bytes} /dev/zero | tr '\\0' b`);
  t.same(
    [exact.truncated, exact.stdoutBytes],
    [false, COMMAND_LIMITS.output_bytes],
    'exactly the bound is whole',
  );
});

t.test('each stream is counted on its own', { skip }, async (t) => {
  t.match(await run('printf abc; printf defgh >&2'), {
    output: 'abcdefgh',
    stdoutBytes: 3,
    stderrBytes: 5,
    truncated: false,
  });
  t.match(await run('printf 12345 >&2; printf 678', 5), {
    output: '12345',
    stdoutBytes: 3,
    stderrBytes: 5,
    truncated: true,
  });
});

t.test('the cut falls on a character boundary', { skip }, async (t) => {
  // 'abcd' then 'é' (two bytes) straddling the five-byte bound.
  t.match(await run("printf 'abcd\\303\\251xyz'", 5), { output: 'abcd', truncated: true, stdoutBytes: 9 });
});

t.test('stdout and stderr arrive in one stream, in order', { skip }, async (t) => {
  const outcome = await run('echo out; sleep 0.1; echo err >&2; sleep 0.1; echo out again');
  t.equal(outcome.output, 'out\nerr\nout again\n');
  t.equal(outcome.truncated, false);
});

t.test('a command printing megabytes on both pipes runs to its end', { skip }, async (t) => {
  const outcome = await run(
    'head -c 3000000 /dev/zero >&2 & head -c 3000000 /dev/zero; wait; echo finished >&2',
  );
  t.equal(outcome.exitCode, 0, 'it finished rather than blocking on a full pipe');
  t.same(
    [outcome.stdoutBytes, outcome.stderrBytes],
    [3_000_000, 3_000_009],
    'every byte of both pipes is counted',
  );
  t.equal(outcome.truncated, true);
  t.equal(Buffer.byteLength(outcome.output), COMMAND_LIMITS.output_bytes);
});
