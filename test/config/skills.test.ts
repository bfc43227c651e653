import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { discoverSkills } from '../../config/skills.js';

t.test('no skills folder means no skills', async (t) => {
  t.same(discoverSkills(t.testdir()), []);
  t.same(discoverSkills(join(t.testdir(), 'absent')), []);
});

t.test('a skills path that is a file means no skills', async (t) => {
  const home = t.testdir({ skills: 'not a folder' });
  t.same(discoverSkills(home), []);
});

t.test('skills are the folders holding a SKILL.md, by folder name, sorted', async (t) => {
  const home = t.testdir({
    skills: {
      review: { 'SKILL.md': '# Review' },
      Deploy: { 'SKILL.md': '' },
      'draft-notes': { 'SKILL.md': 'text', 'other.md': 'x' },
      empty: {},
      readme_only: { 'README.md': 'no skill here' },
      'skill.md-lowercase': { 'skill.md': 'wrong case' },
      nested: { inner: { 'SKILL.md': 'too deep' } },
      'loose-file.md': 'a file, not a skill folder',
    },
  });
  t.same(discoverSkills(home), ['Deploy', 'draft-notes', 'review']);
});

t.test('a symlinked skill folder is skipped', async (t) => {
  const home = t.testdir({
    skills: { real: { 'SKILL.md': 'x' } },
    elsewhere: { linked: { 'SKILL.md': 'x' } },
  });
  symlinkSync(join(home, 'elsewhere', 'linked'), join(home, 'skills', 'linked'));
  symlinkSync(join(home, 'skills', 'real'), join(home, 'skills', 'alias'));
  t.same(discoverSkills(home), ['real']);
});

t.test(
  'a SKILL.md that is a symlink, a directory or a FIFO is discovered (its name reserved) without being opened',
  async (t) => {
    const home = t.testdir({
      skills: { linked: {}, odd: { 'SKILL.md': {} }, piped: {}, fine: { 'SKILL.md': 'x' }, empty: {} },
      target: 'instructions',
    });
    symlinkSync(join(home, 'target'), join(home, 'skills', 'linked', 'SKILL.md'));
    execFileSync('mkfifo', [join(home, 'skills', 'piped', 'SKILL.md')]);
    // Reading the skill decides that none but `fine` is usable, and says why; discovery only finds them.
    t.same(discoverSkills(home), ['fine', 'linked', 'odd', 'piped']);
  },
);

t.test('a followed skills folder is read (only its entries must be real folders)', async (t) => {
  const home = t.testdir({ store: { kept: { 'SKILL.md': 'x' } } });
  symlinkSync(join(home, 'store'), join(home, 'skills'));
  t.same(discoverSkills(home), ['kept']);
});

t.test('names are kept exactly as the folder names', async (t) => {
  const home = t.testdir();
  for (const name of ['Mixed_Case', 'with space', 'ünïcode', '.hidden']) {
    mkdirSync(join(home, 'skills', name), { recursive: true });
    writeFileSync(join(home, 'skills', name, 'SKILL.md'), 'x');
  }
  t.same(discoverSkills(home), ['.hidden', 'Mixed_Case', 'with space', 'ünïcode']);
});
