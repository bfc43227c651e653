import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { discoverSkills } from '../../../config/skills.js';
import { HiddenPlaces } from '../../../core/confinement/hidden-places.js';
import {
  type InstalledSkill,
  loadInstalledSkills,
  SKILL_LIMITS,
} from '../../../core/skills/installed-skills.js';

const SKILL = '---\ndescription: Lists.\n---\nBody.\n';

/** A home outside the test's fixture folder, whose cleanup takes long for thousands of entries. */
function scratchHome(t: Test): string {
  const home = mkdtempSync(join(tmpdir(), 'magid-skill-files-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

/** Writes skills/<...skill>/SKILL.md and each of `files` beneath that folder. */
function writeSkill(home: string, skill: string, files: Record<string, string> = {}): string {
  const folder = join(home, 'skills', skill);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'SKILL.md'), SKILL);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(folder, path, '..'), { recursive: true });
    writeFileSync(join(folder, path), content);
  }
  return folder;
}

function loadOne(home: string): InstalledSkill {
  const result = loadInstalledSkills(
    discoverSkills(home).skills,
    [],
    [join(home, 'state')],
    new HiddenPlaces([]),
  );
  if (result.skills.length !== 1)
    throw new Error(`expected one skill, got ${JSON.stringify(result.skipped)}`);
  return result.skills[0]!;
}

const listed = (skill: InstalledSkill) => skill.files.map((file) => file.path);

t.test(
  'a skill lists the regular files of its folder beside SKILL.md, in path order, with sizes',
  async (t) => {
    const home = t.testdir();
    const folder = writeSkill(home, 'pdf', {
      'REFERENCE.md': 'ref',
      'forms.md': 'forms!',
      'scripts/fill.py': 'print(1)\n',
      'reference/api/calls.md': 'calls',
      '.gitignore': '*.pyc\n',
    });
    t.same(loadOne(home).files, [
      { path: '.gitignore', size: 6 },
      { path: 'REFERENCE.md', size: 3 },
      { path: 'forms.md', size: 6 },
      { path: 'reference/api/calls.md', size: 5 },
      { path: 'scripts/fill.py', size: 9 },
    ]);
    t.equal(loadOne(home).filesTruncated, false);
    t.ok(folder);
  },
);

t.test('links, hard links, non-regular files, credential-like paths and .git are not listed', async (t) => {
  const home = t.testdir({ elsewhere: { 'outside.md': 'x', dir: { 'inner.md': 'x' } } });
  const folder = writeSkill(home, 'pdf', {
    'kept.md': 'x',
    '.env': 'TOKEN=1',
    'keys/id_rsa': 'x',
    '.git/config': 'x',
    'server.pem': 'x',
    'twice.md': 'x',
  });
  symlinkSync(join(home, 'elsewhere', 'outside.md'), join(folder, 'linked.md'));
  symlinkSync(join(home, 'elsewhere', 'dir'), join(folder, 'linked-dir'));
  linkSync(join(folder, 'twice.md'), join(home, 'elsewhere', 'second-name'));
  execFileSync('mkfifo', [join(folder, 'pipe')]);
  const skill = loadOne(home);
  t.same(listed(skill), ['kept.md']);
  t.equal(skill.filesTruncated, false, 'what may never be read is not counted as left out');
});

t.test(
  'files of a cloned collection and of a linked skill folder are listed from their own folder',
  async (t) => {
    const home = t.testdir({ clone: { 'SKILL.md': SKILL, 'reference.md': 'r' } });
    writeSkill(home, 'collection/skills/pdf', { 'reference/forms.md': 'f' });
    symlinkSync(join(home, 'clone'), join(home, 'skills', 'clone'));
    const result = loadInstalledSkills(
      discoverSkills(home).skills,
      [],
      [join(home, 'state')],
      new HiddenPlaces([]),
    );
    t.same(
      result.skills.map((skill) => [skill.name, listed(skill)]),
      [
        ['clone', ['reference.md']],
        ['pdf', ['reference/forms.md']],
      ],
    );
  },
);

/** `count` files of `nameBytes`-byte names f000xxx…, the last one `lastExtra` bytes longer. */
function namedFiles(count: number, nameBytes: number, lastExtra: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i += 1) {
    const stem = `f${String(i).padStart(3, '0')}`;
    files[stem + 'x'.repeat(nameBytes - stem.length + (i === count - 1 ? lastExtra : 0))] = '';
  }
  return files;
}

t.test(
  'a listing of exactly files_listing_bytes keeps every file; one byte more leaves the last out',
  async (t) => {
    // Each entry is {"path":"<name>","size":0}: 20 bytes and its name, one comma between entries, 2 brackets.
    const count = 100;
    const nameBytes = 60;
    const rest = SKILL_LIMITS.files_listing_bytes - (2 + count * (20 + nameBytes) + count - 1);
    const exact = t.testdir();
    writeSkill(exact, 'many', namedFiles(count, nameBytes, rest));
    const whole = loadOne(exact);
    t.equal(whole.files.length, count);
    t.equal(Buffer.byteLength(JSON.stringify(whole.files)), SKILL_LIMITS.files_listing_bytes);
    t.equal(whole.filesTruncated, false);

    const over = t.testdir();
    writeSkill(over, 'many', namedFiles(count, nameBytes, rest + 1));
    const cut = loadOne(over);
    t.equal(cut.files.length, count - 1);
    t.equal(cut.filesTruncated, true);
  },
);

t.test('files_examined entries are looked at; the one past them is not', async (t) => {
  // SKILL.md, symbolic links (looked at, never listed) and z.md last.
  const home = scratchHome(t);
  const folder = writeSkill(home, 'wide', { 'z.md': 'last' });
  const link = (i: number) => symlinkSync('z.md', join(folder, `l${String(i).padStart(4, '0')}`));
  for (let i = 0; i < SKILL_LIMITS.files_examined - 2; i += 1) link(i);
  const whole = loadOne(home);
  t.same(listed(whole), ['z.md']);
  t.equal(whole.filesTruncated, false);

  link(SKILL_LIMITS.files_examined - 2);
  const cut = loadOne(home);
  t.same(listed(cut), []);
  t.equal(cut.filesTruncated, true);
});

t.test('a file files_depth components deep is listed; one deeper is not', async (t) => {
  const home = t.testdir();
  const atBound = `${'d/'.repeat(SKILL_LIMITS.files_depth - 1)}at-bound.md`;
  const past = `${'d/'.repeat(SKILL_LIMITS.files_depth)}past.md`;
  writeSkill(home, 'deep', { [atBound]: 'x', [past]: 'x' });
  const skill = loadOne(home);
  t.same(listed(skill), [atBound]);
  t.equal(skill.filesTruncated, true);
});
