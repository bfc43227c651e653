import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { discoverSkills } from '../../config/skills.js';
import type { SkillDiscovery } from '../../core/skills/skill-discovery.js';
import { SKILL_LIMITS } from '../../core/skills/skill-limits.js';

const paths = (discovery: SkillDiscovery) => discovery.skills.map((skill) => skill.path);
const unused = (discovery: SkillDiscovery) =>
  Object.fromEntries(discovery.unused.map(({ path, reason }) => [path, reason]));

t.test('no skills folder means no skills', async (t) => {
  t.same(discoverSkills(t.testdir()), { skills: [], unused: [] });
  t.same(discoverSkills(join(t.testdir(), 'absent')), { skills: [], unused: [] });
});

t.test('a skills path that is a file means no skills', async (t) => {
  const home = t.testdir({ skills: 'not a folder' });
  t.same(discoverSkills(home), { skills: [], unused: [] });
});

t.test('skills are the folders holding a SKILL.md; every other entry is reported with why', async (t) => {
  const home = t.testdir({
    skills: {
      review: { 'SKILL.md': '# Review', notes: { 'SKILL.md': 'a bundled file, not a skill' } },
      Deploy: { 'SKILL.md': '' },
      'draft-notes': { 'SKILL.md': 'text', 'other.md': 'x' },
      empty: {},
      readme_only: { 'README.md': 'no skill here' },
      'skill.md-lowercase': { 'skill.md': 'wrong case' },
      'loose-file.md': 'a file, not a skill folder',
      '.hidden': { 'SKILL.md': 'x' },
      '.DS_Store': 'x',
    },
  });
  const discovery = discoverSkills(home);
  t.same(paths(discovery), ['Deploy', 'draft-notes', 'review']);
  t.same(discovery.skills[0], {
    name: 'Deploy',
    path: 'Deploy',
    root: join(home, 'skills'),
    components: ['Deploy'],
  });
  t.same(unused(discovery), {
    '.DS_Store': 'hidden',
    '.hidden': 'hidden',
    empty: 'no_skill',
    'loose-file.md': 'not_a_skill',
    readme_only: 'no_skill',
    'skill.md-lowercase': 'no_skill',
  });
});

t.test('a cloned collection is searched down to three levels beneath skills/', async (t) => {
  const home = t.testdir({
    skills: {
      anthropic: {
        'README.md': 'x',
        '.git': { HEAD: 'x' },
        spec: { 'agent-skills-spec.md': 'x' },
        template: { 'SKILL.md': 'x' },
        skills: { pdf: { 'SKILL.md': 'x' }, docx: { 'SKILL.md': 'x' }, 'LICENSE.txt': 'x' },
      },
      grouped: { tools: { 'deep-one': { 'SKILL.md': 'level 3' } } },
      deeper: { a: { b: { c: { 'SKILL.md': 'level 4: too deep' } } } },
    },
  });
  const discovery = discoverSkills(home);
  t.same(paths(discovery), [
    'anthropic/skills/docx',
    'anthropic/skills/pdf',
    'anthropic/template',
    'grouped/tools/deep-one',
  ]);
  t.same(discovery.skills[0], {
    name: 'docx',
    path: 'anthropic/skills/docx',
    root: join(home, 'skills'),
    components: ['anthropic', 'skills', 'docx'],
  });
  t.same(unused(discovery), {
    'anthropic/.git': 'hidden',
    'anthropic/README.md': 'not_a_skill',
    'anthropic/skills/LICENSE.txt': 'not_a_skill',
    'anthropic/spec': 'no_skill',
    deeper: 'no_skill',
  });
});

t.test(
  'a linked clone whose skills are all in hidden folders is one no_skill entry and names each hidden folder',
  async (t) => {
    // The layout of a clone of openai/skills: its skills four levels down, in hidden folders.
    const home = t.testdir({
      skills: {},
      clone: {
        '.git': { HEAD: 'x' },
        '.github': { workflows: { 'ci.yml': 'x' } },
        'README.md': 'x',
        scripts: { 'sync.py': 'x' },
        skills: {
          '.curated': { 'gh-fix-ci': { 'SKILL.md': 'x' }, notion: { 'SKILL.md': 'x' } },
          '.experimental': { 'create-plan': { 'SKILL.md': 'x' } },
          '.system': { 'skill-creator': { 'SKILL.md': 'x' } },
        },
      },
    });
    symlinkSync(join(home, 'clone'), join(home, 'skills', 'openai'));
    const discovery = discoverSkills(home);
    t.same(paths(discovery), []);
    t.same(discovery.unused, [
      { path: 'openai', reason: 'no_skill' },
      { path: 'openai/.git', reason: 'hidden' },
      { path: 'openai/.github', reason: 'hidden' },
      { path: 'openai/skills/.curated', reason: 'hidden' },
      { path: 'openai/skills/.experimental', reason: 'hidden' },
      { path: 'openai/skills/.system', reason: 'hidden' },
    ]);
  },
);

t.test(
  'a symlinked skill folder or collection is followed; its reads start at the real folder',
  async (t) => {
    const home = t.testdir({
      skills: { real: { 'SKILL.md': 'x' } },
      clone: { skills: { linked: { 'SKILL.md': 'x' } }, 'README.md': 'x' },
    });
    symlinkSync(join(home, 'clone', 'skills', 'linked'), join(home, 'skills', 'linked'));
    symlinkSync(join(home, 'clone'), join(home, 'skills', 'collection'));
    symlinkSync(join(home, 'skills', 'real'), join(home, 'skills', 'alias'));
    const discovery = discoverSkills(home);
    t.same(paths(discovery), ['alias', 'collection/skills/linked', 'linked', 'real']);
    const real = (path: string) => realpathSync(path);
    t.same(discovery.skills[0], {
      name: 'alias',
      path: 'alias',
      root: real(join(home, 'skills', 'real')),
      components: [],
    });
    t.same(discovery.skills[1], {
      name: 'linked',
      path: 'collection/skills/linked',
      root: real(join(home, 'clone')),
      components: ['skills', 'linked'],
    });
    t.same(unused(discovery), { 'collection/README.md': 'not_a_skill' });
  },
);

t.test('a link that may not be followed is reported with its reason', async (t) => {
  const home = t.testdir({
    skills: {},
    '.ssh': { keys: { 'SKILL.md': 'x' } },
    state: { 'SKILL.md': 'x' },
    file: 'x',
  });
  const skills = join(home, 'skills');
  symlinkSync(join(home, 'nowhere'), join(skills, 'broken'));
  symlinkSync(join(home, 'file'), join(skills, 'to-file'));
  symlinkSync(join(home, '.ssh', 'keys'), join(skills, 'keys'));
  symlinkSync(home, join(skills, 'home'));
  symlinkSync(join(home, '..'), join(skills, 'above-home'));
  symlinkSync(join(home, 'state'), join(skills, 'state'));
  symlinkSync(skills, join(skills, 'loop'));
  t.same(discoverSkills(home), {
    skills: [],
    unused: [
      { path: 'above-home', reason: 'link_daemon_home' },
      { path: 'broken', reason: 'link_broken' },
      { path: 'home', reason: 'link_daemon_home' },
      { path: 'keys', reason: 'link_credential_path' },
      { path: 'loop', reason: 'link_loop' },
      { path: 'state', reason: 'link_daemon_home' },
      { path: 'to-file', reason: 'link_not_directory' },
    ],
  });
});

t.test('a link back up to a collection it lies in is a loop, not the same skills again', async (t) => {
  const home = t.testdir({ skills: { group: { one: { 'SKILL.md': 'x' } } } });
  symlinkSync(join(home, 'skills', 'group'), join(home, 'skills', 'group', 'again'));
  const discovery = discoverSkills(home);
  t.same(paths(discovery), ['group/one']);
  t.same(discovery.unused, [{ path: 'group/again', reason: 'link_loop' }]);
});

t.test(
  'a SKILL.md that is a symlink, a directory or a FIFO is discovered (its name reserved) without being opened',
  async (t) => {
    const home = t.testdir({
      skills: { linked: {}, odd: { 'SKILL.md': {} }, piped: {}, fine: { 'SKILL.md': 'x' } },
      target: 'instructions',
    });
    symlinkSync(join(home, 'target'), join(home, 'skills', 'linked', 'SKILL.md'));
    execFileSync('mkfifo', [join(home, 'skills', 'piped', 'SKILL.md')]);
    // Reading the skill decides that none but `fine` is usable, and says why; discovery only finds them.
    t.same(paths(discoverSkills(home)), ['fine', 'linked', 'odd', 'piped']);
  },
);

t.test('a followed skills folder is read like the home', async (t) => {
  const home = t.testdir({ store: { kept: { 'SKILL.md': 'x' } } });
  symlinkSync(join(home, 'store'), join(home, 'skills'));
  t.same(paths(discoverSkills(home)), ['kept']);
});

t.test('names are kept exactly as the folder names', async (t) => {
  const home = t.testdir();
  for (const name of ['Mixed_Case', 'with space', 'ünïcode']) {
    mkdirSync(join(home, 'skills', name), { recursive: true });
    writeFileSync(join(home, 'skills', name, 'SKILL.md'), 'x');
  }
  t.same(paths(discoverSkills(home)), ['Mixed_Case', 'with space', 'ünïcode']);
});

/** Files directly in skills/, f0000, f0001, … up to `count`: entries that are each reported as no skill. */
function looseFiles(home: string, from: number, count: number): void {
  mkdirSync(join(home, 'skills'), { recursive: true });
  for (let i = from; i < count; i += 1)
    writeFileSync(join(home, 'skills', `f${String(i).padStart(4, '0')}`), '');
}

/** A home outside the test's fixture folder, whose cleanup takes long for thousands of entries. */
function scratchHome(t: Test): string {
  const home = mkdtempSync(join(tmpdir(), 'magid-skills-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

t.test('discovery examines discovery_entries entries, and says where it stopped past them', async (t) => {
  const home = scratchHome(t);
  looseFiles(home, 0, SKILL_LIMITS.discovery_entries);
  const all = discoverSkills(home).unused;
  t.equal(all.length, SKILL_LIMITS.discovery_entries);
  t.ok(all.every((entry) => entry.reason === 'not_a_skill'));

  looseFiles(home, SKILL_LIMITS.discovery_entries, SKILL_LIMITS.discovery_entries + 1);
  const cut = discoverSkills(home).unused;
  t.equal(cut.length, SKILL_LIMITS.discovery_entries + 1);
  t.same(cut.at(-2), { path: `f${SKILL_LIMITS.discovery_entries - 1}`, reason: 'not_a_skill' });
  t.same(cut.at(-1), { path: `f${SKILL_LIMITS.discovery_entries}`, reason: 'not_examined' });
});
