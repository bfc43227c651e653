import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from './magid-command.js';

// Test files run side by side: a file that looks for, waits on or kills the processes running a
// marker (`sleep` and a number of five digits or more) would find another file's as well, so every
// such marker is used by one file only.
const MARKER = /\bsleep (\d{5,})\b/g;

const testFolder = join(PROJECT_ROOT, 'test');
const files = readdirSync(testFolder, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => join(testFolder, file));

t.test('each process marker of the tests belongs to one test file', async (t) => {
  const users = new Map<string, Set<string>>();
  for (const file of files) {
    for (const [, number] of readFileSync(file, 'utf8').matchAll(MARKER)) {
      const marker = `sleep ${number}`;
      users.set(marker, (users.get(marker) ?? new Set()).add(relative(PROJECT_ROOT, file)));
    }
  }
  t.ok(users.size >= 10, `the markers were found (${users.size})`);
  const shared = [...users].filter(([, inFiles]) => inFiles.size > 1).map(([marker]) => marker);
  t.same(shared, [], 'no marker is used by two files');
});
