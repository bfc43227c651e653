import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { TYPESCRIPT_LOADER } from '../../helpers/typescript-loader.js';
import { WITHOUT_TEST_HOOKS } from '../../helpers/without-test-hooks.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const PROJECT_ROOT = resolve(HERE, '../../..');
const SCRIPT = join(HERE, 'fixtures/rewrite-loop.ts');
const LARGE = WORKSPACE_TOOL_LIMITS.write_bytes_max;
const SMALLER = 200_003;
const contentOf = (fill: string, bytes: number) => `${fill.repeat(bytes - 1)}\n`;
const OLD_OR_NEW = new Set([contentOf('a', LARGE), contentOf('b', SMALLER)]);

/** Kill moments: after this many completed writes, then this many milliseconds more. */
const MOMENTS: ReadonlyArray<readonly [number, number]> = [
  [0, 0],
  [1, 1],
  [2, 3],
  [5, 2],
  [8, 1],
  [21, 0],
];

/** Starts the rewriting child; resolves once `writes` writes were answered and `delayMs` more passed. */
function killedAfter(workspace: string, writes: number, delayMs: number): Promise<number> {
  const child = spawn(
    '/usr/bin/env',
    [
      ...WITHOUT_TEST_HOOKS,
      '--import',
      TYPESCRIPT_LOADER,
      SCRIPT,
      workspace,
      'target.txt',
      String(LARGE),
      String(SMALLER),
    ],
    { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolveKill, reject) => {
    let output = '';
    let killing = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      output += text;
      const answered = output.split('\n').filter((line) => /^\d+$/.test(line)).length;
      if (killing || !output.startsWith('ready\n') || answered < writes) return;
      killing = true;
      setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolveKill(output.split('\n').filter((line) => /^\d+$/.test(line)).length);
      else reject(new Error(`the rewriting child exited by itself (${code})`));
    });
  });
}

t.test(
  'a write killed with SIGKILL at any moment leaves the target exactly old or exactly new',
  async (t) => {
    t.setTimeout(180_000);
    const workspace = t.testdir();
    writeFileSync(join(workspace, 'target.txt'), contentOf('a', LARGE));
    const seen = new Set<string>();
    for (const [writes, delayMs] of MOMENTS) {
      const answered = await killedAfter(workspace, writes, delayMs);
      const content = readFileSync(join(workspace, 'target.txt'), 'utf8');
      t.ok(
        OLD_OR_NEW.has(content),
        `killed after ${answered} writes (+${delayMs} ms): old or new, never torn`,
      );
      seen.add(content.slice(0, 1));
    }
    const temporaries = readdirSync(workspace).filter((name) => name !== 'target.txt');
    t.comment(`contents seen: ${[...seen].sort().join(', ')}; ${temporaries.length} writes killed mid-way`);
    t.ok(
      temporaries.every((name) => /^\.target\.txt\.[0-9a-f]{12}\.tmp$/.test(name)),
      'anything else left is a temporary of the write',
    );
  },
);

t.test('a first write killed at any moment leaves no target or the whole new one', async (t) => {
  t.setTimeout(60_000);
  for (const [writes, delayMs] of MOMENTS.slice(0, 4)) {
    const workspace = t.testdir();
    await killedAfter(workspace, writes, delayMs);
    const target = join(workspace, 'target.txt');
    if (existsSync(target)) t.ok(OLD_OR_NEW.has(readFileSync(target, 'utf8')), 'complete when present');
    else t.equal(writes, 0, 'absent only when no write was answered');
  }
});
