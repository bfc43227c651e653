import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const MODULE = fileURLToPath(new URL('../../../core/endpoint/inherited-descriptors.ts', import.meta.url));

/**
 * Run in a process started with a file open at descriptor 40 without FD_CLOEXEC, as a launcher's shell can
 * leave one (Node marks the lowest few itself; bash, unlike sh, opens one that high): what a child of that
 * process sees of the file before and after the descriptors are marked. It runs under the test process's
 * own TypeScript hooks, which its NODE_OPTIONS carry.
 */
const SCRIPT = `
import { spawnSync } from 'node:child_process';
import { readlinkSync, writeSync } from 'node:fs';
import { closeInheritedOnExec } from ${JSON.stringify(MODULE)};
const file = readlinkSync('/proc/self/fd/40');
const seen = () => spawnSync('/bin/sh', ['-c', 'for fd in /proc/self/fd/*; do readlink "$fd"; done'])
  .stdout.toString().split('\\n').includes(file);
const before = seen();
const marked = closeInheritedOnExec();
const after = seen();
writeSync(40, 'still open here\\n');
console.log(JSON.stringify({ before, marked, after }));
`;

function text(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    let collected = '';
    stream.on('data', (chunk: Buffer) => {
      collected += chunk.toString();
    });
    stream.on('end', () => resolve(collected));
  });
}

t.test('a descriptor inherited without FD_CLOEXEC is marked, and a child no longer gets it', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'magi-inherited-test-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const script = join(directory, 'marks.ts');
  await writeFile(script, SCRIPT);
  const written = join(directory, 'written');
  const child = spawn('/bin/bash', ['-c', 'exec "$0" "$1" 40>"$2"', process.execPath, script, written], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [output] = await Promise.all([
    text(child.stdout!),
    new Promise((resolve) => child.once('exit', resolve)),
  ]);
  const result = JSON.parse(output) as { before: boolean; marked: number; after: boolean };
  t.equal(result.before, true, 'before, a child of the process inherits the file');
  t.ok(result.marked >= 1, `marked ${result.marked}, the file among them`);
  t.equal(result.after, false, 'after, it does not');
  t.equal(await readFile(written, 'utf8'), 'still open here\n', 'the process itself keeps it open');
});
