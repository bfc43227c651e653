import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { discoverSkills } from '../../../config/skills.js';
import { HiddenPlaces } from '../../../core/confinement/hidden-places.js';
import {
  type InstalledSkills,
  loadInstalledSkills,
  SKILL_LIMITS,
  type SkillSkipReason,
  skillIndex,
} from '../../../core/skills/installed-skills.js';
import type { DiscoveredSkill } from '../../../core/skills/skill-discovery.js';

/** Put in every refused file, so a test can prove no warning repeats what a file holds. */
const SECRET = 'FILE-CONTENT-SECRET-41c9';

function skillFile(description: string, body: string, extra = ''): string {
  return `---\n${extra}description: ${description}\n---\n${body}`;
}

function writeSkill(home: string, name: string, content: string | Buffer): void {
  mkdirSync(join(home, 'skills', name), { recursive: true });
  writeFileSync(join(home, 'skills', name, 'SKILL.md'), content);
}

function skillPath(home: string, name: string): string {
  return join(home, 'skills', name, 'SKILL.md');
}

/** The daemon's state, which no skill's walk may enter. */
const stateOf = (home: string) => [join(home, 'state')];

function load(home: string, disabled: readonly string[] = []): InstalledSkills {
  return loadInstalledSkills(discoverSkills(home).skills, disabled, stateOf(home), new HiddenPlaces([]));
}

function loadDiscovered(home: string, discovered: readonly DiscoveredSkill[]): InstalledSkills {
  return loadInstalledSkills(discovered, [], stateOf(home), new HiddenPlaces([]));
}

/** A skill folder directly in skills/, as discovery would give it, whatever its name. */
function discovered(home: string, name: string): DiscoveredSkill {
  return { name, path: name, root: join(home, 'skills'), components: [name] };
}

/** What a loaded skill of `skills/<name>/` holds besides its name, description and body. */
function folderOf(home: string, name: string) {
  return {
    folder: { root: join(home, 'skills'), components: [name], hidden: [] },
    files: [],
    filesTruncated: false,
  };
}

/** The loaded skills without what only the folder decides. */
function texts(result: InstalledSkills) {
  return result.skills.map(({ name, description, body }) => ({ name, description, body }));
}

function reasons(result: InstalledSkills): Record<string, SkillSkipReason> {
  return Object.fromEntries(result.skipped.map(({ skill, reason }) => [skill, reason]));
}

function names(result: InstalledSkills): string[] {
  return result.skills.map((skill) => skill.name);
}

t.test('valid skills load, with and without a name, with CRLF line ends and a byte-order mark', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'named', '---\nname: named\ndescription: Reviews a diff.\n---\n# Review\n\nRead it.\n');
  writeSkill(
    home,
    'unnamed',
    '---\ndescription: "  Plans work.  "\nowner: someone\n---\n\n\n  \nStep one.\n',
  );
  writeSkill(
    home,
    'crlf',
    '---\r\nname: crlf\r\ndescription: Uses CRLF.\r\n---\r\n\r\nLine one.\r\nLine two.\r\n',
  );
  writeSkill(home, 'bom', '\uFEFF---\ndescription: Starts with a BOM.\n---\nBody.');
  const result = load(home);
  t.same(result.skipped, []);
  t.same(result.skills[0], {
    name: 'bom',
    description: 'Starts with a BOM.',
    body: 'Body.',
    ...folderOf(home, 'bom'),
  });
  t.same(texts(result), [
    { name: 'bom', description: 'Starts with a BOM.', body: 'Body.' },
    { name: 'crlf', description: 'Uses CRLF.', body: 'Line one.\r\nLine two.\r\n' },
    { name: 'named', description: 'Reviews a diff.', body: '# Review\n\nRead it.\n' },
    { name: 'unnamed', description: 'Plans work.', body: 'Step one.\n' },
  ]);
});

t.test('a file without front matter is skipped', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'plain', `# Just markdown ${SECRET}\n`);
  writeSkill(home, 'late', `\n---\ndescription: ${SECRET}\n---\n`);
  writeSkill(home, 'dashes', `----\ndescription: ${SECRET}\n----\n`);
  writeSkill(home, 'empty', '');
  t.same(load(home), {
    skills: [],
    skipped: [
      { skill: 'dashes', reason: 'no_front_matter' },
      { skill: 'empty', reason: 'no_front_matter' },
      { skill: 'late', reason: 'no_front_matter' },
      { skill: 'plain', reason: 'no_front_matter' },
    ],
    cut: [],
  });
});

t.test('malformed front matter is skipped', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'bad-yaml', `---\ndescription: [${SECRET}\n---\n`);
  writeSkill(home, 'a-list', `---\n- ${SECRET}\n- two\n---\n`);
  writeSkill(home, 'numeric', `---\ndescription: 42\n---\n${SECRET}`);
  writeSkill(home, 'listed-name', `---\nname: [x]\ndescription: ${SECRET}\n---\n`);
  writeSkill(home, 'unclosed', `---\ndescription: ${SECRET}\n`);
  writeSkill(home, 'tagged', `---\ndescription: !!binary ${Buffer.from(SECRET).toString('base64')}\n---\n`);
  writeSkill(home, 'custom-tag', `---\ndescription: !js/function ${SECRET}\n---\n`);
  writeSkill(home, 'duplicate', `---\ndescription: one\ndescription: ${SECRET}\n---\n`);
  const result = load(home);
  t.same(result.skills, []);
  t.same(reasons(result), {
    'a-list': 'malformed_front_matter',
    'bad-yaml': 'malformed_front_matter',
    'custom-tag': 'malformed_front_matter',
    duplicate: 'malformed_front_matter',
    'listed-name': 'malformed_front_matter',
    numeric: 'malformed_front_matter',
    tagged: 'malformed_front_matter',
    unclosed: 'malformed_front_matter',
  });
});

t.test('the name, if given, must equal the directory name exactly', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'deploy', skillFile('Deploys.', 'x', 'name: other\n'));
  writeSkill(home, 'review', skillFile('Reviews.', 'x', 'name: Review\n'));
  writeSkill(home, 'fine', skillFile('Fine.', 'x', 'name: "fine"\n'));
  const result = load(home);
  t.same(names(result), ['fine']);
  t.same(reasons(result), { deploy: 'name_mismatch', review: 'name_mismatch' });
});

t.test(
  'the description must be present and non-empty after trimming; past its character bound it is cut there',
  async (t) => {
    const home = t.testdir();
    // Characters, not bytes: 1,024 of them may take 4,096 bytes.
    const atBound = '😀'.repeat(SKILL_LIMITS.description_chars);
    writeSkill(home, 'missing', `---\nname: missing\n---\n${SECRET}`);
    writeSkill(home, 'blank', `---\ndescription: "   "\n---\n${SECRET}`);
    writeSkill(home, 'at-bound', skillFile(`"  ${atBound}  "`, 'x'));
    writeSkill(home, 'past-bound', skillFile(`${atBound}a`, 'x'));
    const result = load(home);
    t.same(texts(result), [
      { name: 'at-bound', description: atBound, body: 'x' },
      { name: 'past-bound', description: atBound, body: 'x' },
    ]);
    t.same(reasons(result), { blank: 'no_description', missing: 'no_description' });
    t.same(result.cut, [{ skill: 'past-bound', characters: SKILL_LIMITS.description_chars + 1 }]);
  },
);

t.test('a 1,068-character description is cut to its first 1,024 characters and indexed', async (t) => {
  const home = t.testdir();
  const description =
    `Build apps with the Claude API. ${'Use it for tool use and streaming. '.repeat(30)}`.slice(0, 1_068);
  t.equal(description.length, 1_068);
  writeSkill(home, 'claude-api', skillFile(JSON.stringify(description), 'Read the docs first.'));
  const result = load(home);
  t.same(result.skipped, []);
  t.same(result.cut, [{ skill: 'claude-api', characters: 1_068 }]);
  const kept = description.slice(0, 1_024).trimEnd();
  t.equal(result.skills[0]?.description, kept);
  t.match(skillIndex(result.skills), `- claude-api: ${kept}`);
});

t.test('a SKILL.md of exactly skill_bytes loads, one byte more is too large', async (t) => {
  const home = t.testdir();
  const head = skillFile('Big.', '');
  const body = 'b'.repeat(SKILL_LIMITS.skill_bytes - Buffer.byteLength(head));
  writeSkill(home, 'exact', head + body);
  writeSkill(home, 'over', `${head + body}c`);
  const result = load(home);
  t.same(names(result), ['exact']);
  t.equal(result.skills[0]!.body, body);
  t.same(result.skipped, [{ skill: 'over', reason: 'too_large' }]);
});

t.test('a SKILL.md swapped for a symlink after discovery is refused', async (t) => {
  const home = t.testdir({ elsewhere: { 'SKILL.md': skillFile('Outside.', SECRET) } });
  writeSkill(home, 'linked', skillFile('Inside.', 'x'));
  const { skills: discovered } = discoverSkills(home);
  t.same(
    discovered.map((skill) => skill.name),
    ['linked'],
  );
  unlinkSync(skillPath(home, 'linked'));
  symlinkSync(join(home, 'elsewhere', 'SKILL.md'), skillPath(home, 'linked'));
  t.same(loadDiscovered(home, discovered), {
    skills: [],
    skipped: [{ skill: 'linked', reason: 'symlink' }],
    cut: [],
  });
});

t.test('a skill directory swapped for a symlink after discovery is refused', async (t) => {
  const home = t.testdir({ elsewhere: {} });
  writeSkill(home, 'swapped', skillFile('Swapped.', SECRET));
  writeSkill(home, 'kept', skillFile('Kept.', 'x'));
  const { skills: discovered } = discoverSkills(home);
  t.same(
    discovered.map((skill) => skill.name),
    ['kept', 'swapped'],
  );
  renameSync(join(home, 'skills', 'swapped'), join(home, 'elsewhere', 'swapped'));
  symlinkSync(join(home, 'elsewhere', 'swapped'), join(home, 'skills', 'swapped'));
  const result = loadDiscovered(home, discovered);
  t.same(names(result), ['kept']);
  t.same(result.skipped, [{ skill: 'swapped', reason: 'symlink' }]);
});

t.test('a hard-linked SKILL.md is refused', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'linked', skillFile('Linked.', SECRET));
  linkSync(skillPath(home, 'linked'), join(home, 'second-name'));
  t.same(reasons(load(home)), { linked: 'hard_linked' });
});

t.test('a SKILL.md swapped for a FIFO or a directory after discovery is not a regular file', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'piped', skillFile('Piped.', 'x'));
  writeSkill(home, 'folder', skillFile('Folder.', 'x'));
  const { skills: discovered } = discoverSkills(home);
  unlinkSync(skillPath(home, 'piped'));
  execFileSync('mkfifo', [skillPath(home, 'piped')]);
  unlinkSync(skillPath(home, 'folder'));
  mkdirSync(skillPath(home, 'folder'));
  t.same(reasons(loadDiscovered(home, discovered)), {
    folder: 'not_regular_file',
    piped: 'not_regular_file',
  });
});

t.test('invalid UTF-8 and a NUL are refused as not text', async (t) => {
  const home = t.testdir();
  writeSkill(
    home,
    'latin1',
    Buffer.concat([Buffer.from(skillFile('Bytes.', SECRET)), Buffer.from([0xe9, 0x0a])]),
  );
  writeSkill(home, 'nul', skillFile('Nul.', `${SECRET}\0`));
  t.same(reasons(load(home)), { latin1: 'not_text', nul: 'not_text' });
});

t.test(
  'a skill on a credential path, gone or no longer a directory since discovery, is not read',
  async (t) => {
    const home = t.testdir();
    writeSkill(home, 'id_rsa', skillFile('Key.', SECRET));
    writeSkill(home, 'gone', skillFile('Gone.', SECRET));
    writeSkill(home, 'flattened', skillFile('Flattened.', SECRET));
    const { skills: discovered } = discoverSkills(home);
    rmSync(join(home, 'skills', 'gone'), { recursive: true });
    rmSync(join(home, 'skills', 'flattened'), { recursive: true });
    writeFileSync(join(home, 'skills', 'flattened'), skillFile('Flattened.', SECRET));
    t.same(reasons(loadDiscovered(home, discovered)), {
      id_rsa: 'credential_path',
      flattened: 'unreadable',
      gone: 'unreadable',
    });
  },
);

t.test('a disabled skill is neither loaded nor warned about, compared case-insensitively', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'Deploy', skillFile('Deploys.', 'x'));
  writeSkill(home, 'broken', SECRET);
  writeSkill(home, 'review', skillFile('Reviews.', 'x'));
  const result = load(home, ['deploy', 'BROKEN']);
  t.same(texts(result), [{ name: 'review', description: 'Reviews.', body: 'x' }]);
  t.same(result.skipped, []);
});

t.test('two skills whose names differ only in case are both skipped, whatever their files', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'Review', skillFile('Reviews.', 'x'));
  writeSkill(home, 'review', SECRET);
  writeSkill(home, 'other', skillFile('Other.', 'x'));
  const result = load(home);
  t.same(names(result), ['other']);
  t.same(result.skipped, [
    { skill: 'Review', reason: 'ambiguous_name' },
    { skill: 'review', reason: 'ambiguous_name' },
  ]);
});

t.test('skills are taken in byte order of their names', async (t) => {
  const home = t.testdir();
  for (const name of ['c', 'B', 'a-b', 'a.b', 'A_b']) writeSkill(home, name, skillFile('Any.', name));
  const shuffled = ['c', 'B', 'a-b', 'a.b', 'A_b'].map((name) => discovered(home, name));
  t.same(names(loadDiscovered(home, shuffled)), ['A_b', 'B', 'a-b', 'a.b', 'c']);
});

t.test(
  'a skill whose name is not plain visible ASCII is skipped: it could not be shown or loaded by name',
  async (t) => {
    const home = t.testdir();
    const odd = ['\u{1F600}', 'é', 'line\nbreak', '.hidden', 'x'.repeat(65)];
    for (const name of [...odd, 'ok']) writeSkill(home, name, skillFile('Any.', 'x'));
    const result = loadDiscovered(
      home,
      [...odd, 'ok'].map((name) => discovered(home, name)),
    );
    t.same(names(result), ['ok']);
    t.same(
      result.skipped.map((entry) => entry.reason),
      odd.map(() => 'invalid_name'),
    );
  },
);

/**
 * 64 skills of 262,000 counted bytes each (a one-byte description and a body), then one that brings the
 * total to `retained_bytes` and `extra` bytes more, and a small one after it.
 */
function fillRetained(home: string, extra: number): void {
  const eachBytes = 262_000;
  for (let i = 0; i < 64; i += 1) {
    writeSkill(home, `a${String(i).padStart(2, '0')}`, skillFile('d', 'x'.repeat(eachBytes - 1)));
  }
  writeSkill(home, 'b', skillFile('d', 'y'.repeat(SKILL_LIMITS.retained_bytes - 64 * eachBytes - 1 + extra)));
  writeSkill(home, 'z', skillFile('z', 'small'));
}

t.test('skills whose bodies and descriptions reach retained_bytes exactly all load', async (t) => {
  const home = t.testdir();
  fillRetained(home, 0);
  rmSync(join(home, 'skills', 'z'), { recursive: true });
  const result = load(home);
  t.equal(result.skills.length, 65);
  const total = result.skills.reduce(
    (sum, skill) => sum + Buffer.byteLength(skill.body) + Buffer.byteLength(skill.description),
    0,
  );
  t.equal(total, SKILL_LIMITS.retained_bytes);
  t.same(result.skipped, []);
});

t.test('one byte past retained_bytes skips that skill and every later one', async (t) => {
  const home = t.testdir();
  fillRetained(home, 1);
  const result = load(home);
  t.equal(result.skills.length, 64);
  t.same(result.skipped, [
    { skill: 'b', reason: 'total_too_large' },
    { skill: 'z', reason: 'total_too_large' },
  ]);
});

t.test('a YAML alias bomb is refused quickly', async (t) => {
  const home = t.testdir();
  const lines = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
  for (let level = 1; level < 12; level += 1) {
    lines.push(
      `a${level}: &a${level} [${Array(9)
        .fill(`*a${level - 1}`)
        .join(', ')}]`,
    );
  }
  writeSkill(home, 'bomb', `---\n${lines.join('\n')}\ndescription: ${SECRET}\n---\n`);
  const started = performance.now();
  const result = load(home);
  t.ok(performance.now() - started < 1_000, 'refused within a second');
  t.same(result, { skills: [], skipped: [{ skill: 'bomb', reason: 'malformed_front_matter' }], cut: [] });
});

t.test('no warning carries file content: each names the skill and a fixed reason only', async (t) => {
  const home = t.testdir();
  writeSkill(home, 'plain', SECRET);
  writeSkill(home, 'bad', `---\n${SECRET}: [\n---\n`);
  writeSkill(home, 'mismatch', skillFile(SECRET, SECRET, `name: ${SECRET}\n`));
  writeSkill(home, 'nodesc', `---\nname: nodesc\n---\n${SECRET}`);
  writeSkill(home, 'nul', `${SECRET}\0`);
  const result = load(home);
  t.equal(result.skipped.length, 5);
  t.notMatch(JSON.stringify(result), SECRET);
  for (const entry of result.skipped) t.same(Object.keys(entry), ['skill', 'reason']);
});
