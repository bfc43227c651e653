import { mkdirSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchOptions } from './cli-options.js';
import { loadAverage, printTable } from './report.js';
import { benchSandbox } from './sandbox-commands.js';
import { type BenchWorkspace, benchWorkspace } from './sandbox-workspace.js';
import { median, percentile } from './stats.js';

/**
 * Sandbox bench: the wall time of `run_command {"command":"true"}` through the command sandbox, in
 * workspaces of growing size, measured in the same run: the first command in each workspace (its first
 * walk), then the median of the later ones, and each against the smallest workspace's. A
 * measurement: it exits 0 whatever the ratio.
 */
const USAGE = `usage: node --import tsx bench/sandbox-scan.ts [options]
  --sizes <list>            workspace sizes in files, comma-separated, the first the baseline
                            (default 10,50000,1000000)
  --files-per-folder <n>    files in each folder (default 20)
  --commands <n>            commands timed in each workspace after its first; they go round the workspaces
                            one at a time, so that the machine's load falls on all alike, and each ratio to
                            the baseline is the median of the rounds' ratios (default 20)
  --gap-ms <n>              pause before each timed command, as the model's turn between two commands
                            would be (default 100); 0 runs them back to back, which favours whichever
                            command's cgroup join comes soonest after the last (the kernel moves a process
                            into a cgroup v1 group at once only shortly after the previous move; otherwise
                            it waits for an RCU grace period, about 10 ms here)
  --directory <dir>         where the workspaces are made (default /var/tmp/magi-sandbox-bench); one already
                            complete there is used again
  --remove                  remove the workspaces at the end

what is timed: CommandSandbox.run (core/sandbox/command-runner.ts), as the daemon sets it up (this machine's
  bwrap, cgroups where the daemon would make them, the user's home), with \`true\` as the command: the
  workspace's check, the cgroup, the gate and bwrap, the command and its end. The turn around it is not.
first: the first command in a workspace, its whole walk included, and the start of the workspace's scan
  thread, which loads its modules through tsx here (the built daemon loads JavaScript).
workspaces: empty files in a tree of folders eight wide, with a .env and a .git folder at the top and a
  key file deep down (bench/sandbox-workspace.ts).`;

const GOAL = { files: 50_000, ratio: 1.5 } as const;

const { values, numberOption, usageError } = benchOptions(USAGE, {
  sizes: { type: 'string', default: '10,50000,1000000' },
  'files-per-folder': { type: 'string', default: '20' },
  commands: { type: 'string', default: '20' },
  'gap-ms': { type: 'string', default: '100' },
  directory: { type: 'string', default: '/var/tmp/magi-sandbox-bench' },
  remove: { type: 'boolean', default: false },
} as const);
const sizes = values.sizes.split(',').map((size) => numberOption('sizes', size.trim(), { integer: true }));
const perFolder = numberOption('files-per-folder', values['files-per-folder'], { integer: true });
const commands = numberOption('commands', values.commands, { integer: true });
const gapMs = numberOption('gap-ms', values['gap-ms'], { zero: true });
const directory = values.directory;
if (sizes.length === 0) usageError('--sizes needs at least one size');

const integer = (value: number) => Math.round(value).toLocaleString('en-US');
const millis = (value: number) => value.toFixed(1);

mkdirSync(directory, { recursive: true });
console.log(`sandbox bench: load ${loadAverage()}, workspaces in ${directory}`);
const workspaces: BenchWorkspace[] = [];
for (const files of sizes) {
  const started = performance.now();
  workspaces.push(benchWorkspace(directory, files, perFolder));
  console.log(`  ${integer(files)} files ready in ${integer(performance.now() - started)} ms`);
}

const sandbox = await benchSandbox(directory);
if (sandbox === null) {
  console.log('no sandbox can run on this machine (bwrap missing or unable to start): nothing measured');
  process.exit(0);
}
try {
  const first = new Map<BenchWorkspace, number>();
  for (const workspace of workspaces) first.set(workspace, await sandbox.time(workspace.path));
  const later = new Map<BenchWorkspace, number[]>(workspaces.map((workspace) => [workspace, []]));
  for (let round = 0; round < commands; round += 1) {
    for (const workspace of workspaces) {
      await sleep(gapMs);
      later.get(workspace)!.push(await sandbox.time(workspace.path));
    }
  }
  const baseline = later.get(workspaces[0]!)!;
  // Each round times every workspace back to back: its ratio to the baseline is taken round by round.
  const ratio = (times: number[]) => median(times.map((time, round) => time / baseline[round]!));
  console.log(
    `\n\`true\` through the sandbox (bounds by ${sandbox.enforcedBy}), ${commands} later commands each, ${gapMs} ms apart; ms`,
  );
  printTable(
    ['files', 'folders', 'first', 'later p50', 'later p90', `/ ${integer(workspaces[0]!.files)} files`],
    workspaces.map((workspace) => {
      const times = later.get(workspace)!;
      const sorted = Float64Array.from(times).sort();
      return [
        integer(workspace.files),
        integer(workspace.folders),
        millis(first.get(workspace)!),
        millis(median(times)),
        millis(percentile(sorted, 0.9)),
        `${ratio(times).toFixed(2)}x`,
      ];
    }),
  );
  const goal = workspaces.find((workspace) => workspace.files === GOAL.files);
  if (goal) {
    const reached = ratio(later.get(goal)!);
    console.log(
      `\ngoal: after the first command, ${integer(GOAL.files)} files within ${GOAL.ratio}x of ${integer(workspaces[0]!.files)}: ${reached.toFixed(2)}x (${reached <= GOAL.ratio ? 'met' : 'missed'})`,
    );
  }
} finally {
  await sandbox.close();
  if (values.remove) rmSync(directory, { recursive: true, force: true });
}
