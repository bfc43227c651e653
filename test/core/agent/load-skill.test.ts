import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { discoverSkills } from '../../../config/skills.js';
import { BUILTIN_LIMITS } from '../../../core/agent/builtin-limits.js';
import { type LoadSkillArguments, loadSkill, type SkillShelf } from '../../../core/agent/load-skill.js';
import { HiddenPlaces } from '../../../core/confinement/hidden-places.js';
import { loadInstalledSkills } from '../../../core/skills/installed-skills.js';
import { runWorkspaceTool } from '../../../core/workspace/run-workspace-tool.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';

const DESCRIPTION = 'Fill and check PDF forms.';

/** A home with skills/<path>/SKILL.md of `body`, and `files` beside it; the shelf the daemon would load. */
function shelfOf(
  home: string,
  skills: Array<{ path: string; body: string; files?: Record<string, string> }>,
): SkillShelf {
  for (const { path, body, files = {} } of skills) {
    const folder = join(home, 'skills', path);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), `---\ndescription: ${DESCRIPTION}\n---\n${body}`);
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(join(folder, file, '..'), { recursive: true });
      writeFileSync(join(folder, file), content);
    }
  }
  const state = [join(home, 'state')];
  const loaded = loadInstalledSkills(discoverSkills(home).skills, [], state, new HiddenPlaces([]));
  return { installed: loaded.skills, excludedDirectories: state };
}

/** Reads as the toolbox does, on the calling thread instead of a pool. */
const read = async (request: Parameters<typeof runWorkspaceTool>[0]) => runWorkspaceTool(request);

async function call(shelf: SkillShelf, args: LoadSkillArguments) {
  const outcome = await loadSkill(shelf, args, read);
  if (!outcome.ok) return { error: outcome.code };
  t.ok(Buffer.byteLength(outcome.output) <= BUILTIN_LIMITS.output_bytes, 'within the output bound');
  return JSON.parse(outcome.output);
}

/** Every window of the skill's text (or of `path`) from offset 0 on, as the model would read it. */
async function readAll(shelf: SkillShelf, args: LoadSkillArguments) {
  const pages = [];
  for (let offset: number | null = 0; offset !== null; ) {
    const page = await call(shelf, { ...args, offset });
    pages.push(page);
    offset = page.next_offset;
  }
  return pages;
}

t.test('an unknown name, compared exactly, is unknown_skill', async (t) => {
  const shelf = shelfOf(t.testdir(), [{ path: 'pdf', body: 'Body.' }]);
  t.same(await call(shelf, { name: 'PDF' }), { error: 'unknown_skill' });
  t.same(await call(shelf, { name: 'pdf ' }), { error: 'unknown_skill' });
  t.same(await call(shelf, { name: 'other', path: 'x.md' }), { error: 'unknown_skill' });
});

t.test('the text of a skill, with its description and its files, in one window', async (t) => {
  const shelf = shelfOf(t.testdir(), [
    {
      path: 'pdf',
      body: '# PDF\n\nSee REFERENCE.md.\n',
      files: { 'REFERENCE.md': 'r', 'scripts/fill.py': 'p' },
    },
  ]);
  t.same(await call(shelf, { name: 'pdf' }), {
    name: 'pdf',
    description: DESCRIPTION,
    files: [
      { path: 'REFERENCE.md', size: 1 },
      { path: 'scripts/fill.py', size: 1 },
    ],
    files_truncated: false,
    size: 25,
    offset: 0,
    length: 25,
    content: '# PDF\n\nSee REFERENCE.md.\n',
    next_offset: null,
  });
});

t.test('a 40 KB text comes in windows that fit the output bound and join to the whole', async (t) => {
  const body = `${'Fill each field, then check it. '.repeat(1_250)}é\n`;
  const shelf = shelfOf(t.testdir(), [{ path: 'pdf', body }]);
  const pages = await readAll(shelf, { name: 'pdf' });
  t.equal(pages.length, 2);
  t.equal(pages.map((page) => page.content).join(''), body);
  t.equal(pages[1].offset, pages[0].offset + pages[0].length);
  t.ok(pages[0].length > 30_000, 'as much as fits');
});

t.test('a text that expands under escaping is cut by its encoded size and read on exactly', async (t) => {
  const body = '"\\\n\u0001'.repeat(4_000);
  const shelf = shelfOf(t.testdir(), [{ path: 'quotes', body }]);
  const pages = await readAll(shelf, { name: 'quotes' });
  t.ok(pages.length > 1);
  t.equal(pages.map((page) => page.content).join(''), body);
});

t.test('an offset inside a character starts at it; past the end nothing is left', async (t) => {
  const shelf = shelfOf(t.testdir(), [{ path: 'pdf', body: 'a€b' }]);
  t.match(await call(shelf, { name: 'pdf', offset: 2 }), { offset: 1, content: '€b', next_offset: null });
  t.match(await call(shelf, { name: 'pdf', offset: 5 }), {
    offset: 5,
    length: 0,
    content: '',
    next_offset: null,
  });
  t.match(await call(shelf, { name: 'pdf', offset: 99 }), { offset: 99, content: '', next_offset: null });
});

t.test('a length bounds the text window, never below one character', async (t) => {
  const shelf = shelfOf(t.testdir(), [{ path: 'pdf', body: '€€x' }]);
  t.match(await call(shelf, { name: 'pdf', length: 4 }), { content: '€', length: 3, next_offset: 3 });
  t.match(await call(shelf, { name: 'pdf', length: 1 }), { content: '€', next_offset: 3 });
  t.match(await call(shelf, { name: 'pdf', offset: 3, length: 3 }), { content: '€', next_offset: 6 });
  t.match(await call(shelf, { name: 'pdf', offset: 6, length: 16_384 }), { content: 'x', next_offset: null });
});

t.test('with a path, a file of the skill folder is read and paged as read_file pages', async (t) => {
  const reference = `${'forms: '.repeat(3_000)}end\n`;
  const shelf = shelfOf(t.testdir(), [
    { path: 'collection/skills/pdf', body: 'Body.', files: { 'reference/forms.md': reference } },
  ]);
  const pages = await readAll(shelf, { name: 'pdf', path: 'reference/forms.md' });
  t.same(Object.keys(pages[0]), ['name', 'path', 'size', 'offset', 'length', 'content', 'next_offset']);
  t.same(
    pages.map((page) => page.length),
    [WORKSPACE_TOOL_LIMITS.read_length_max, reference.length - WORKSPACE_TOOL_LIMITS.read_length_max],
  );
  t.equal(pages.map((page) => page.content).join(''), reference);
  t.match(pages[0], { name: 'pdf', path: 'reference/forms.md', size: reference.length, offset: 0 });
  t.match(await call(shelf, { name: 'pdf', path: 'reference/forms.md', offset: 7, length: 6 }), {
    offset: 7,
    length: 6,
    content: 'forms:',
    next_offset: 13,
  });
});

t.test(
  'a file window that expands under escaping is cut to the output bound and read on exactly',
  async (t) => {
    const quotes = '"'.repeat(WORKSPACE_TOOL_LIMITS.read_length_max * 2);
    const shelf = shelfOf(t.testdir(), [{ path: 'pdf', body: 'Body.', files: { 'quotes.txt': quotes } }]);
    const pages = await readAll(shelf, { name: 'pdf', path: 'quotes.txt' });
    t.ok(pages[0].length < WORKSPACE_TOOL_LIMITS.read_length_max, 'the first window was cut');
    t.equal(pages.map((page) => page.content).join(''), quotes);
  },
);

t.test('a path is confined to the skill folder and walked as a workspace path', async (t) => {
  const home = t.testdir({ outside: 'secret-outside-8c1d', 'skills-other': {} });
  const shelf = shelfOf(home, [
    { path: 'pdf', body: 'Body.', files: { 'notes.md': 'n', '.env': 'TOKEN=1' } },
    { path: 'docx', body: 'Other.', files: { 'docx-only.md': 'd' } },
  ]);
  symlinkSync(join(home, 'outside'), join(home, 'skills', 'pdf', 'linked.md'));
  const refusals: Array<[string, string]> = [
    ['../docx/docx-only.md', 'invalid_path'],
    ['../../outside', 'invalid_path'],
    ['/etc/passwd', 'invalid_path'],
    ['./notes.md', 'invalid_path'],
    ['linked.md', 'symlink'],
    ['.env', 'credential_path'],
    ['missing.md', 'not_found'],
  ];
  for (const [path, code] of refusals) {
    t.same(await call(shelf, { name: 'pdf', path }), { error: code }, path);
  }
  t.match(await call(shelf, { name: 'pdf', path: 'notes.md' }), { content: 'n' });
});

t.test('a linked skill folder is read from its real folder', async (t) => {
  const home = t.testdir({
    clone: { 'SKILL.md': `---\ndescription: ${DESCRIPTION}\n---\nLinked.`, 'ref.md': 'r' },
  });
  mkdirSync(join(home, 'skills'));
  symlinkSync(join(home, 'clone'), join(home, 'skills', 'cloned'));
  const shelf = shelfOf(home, []);
  t.match(await call(shelf, { name: 'cloned' }), {
    content: 'Linked.',
    files: [{ path: 'ref.md', size: 1 }],
  });
  t.match(await call(shelf, { name: 'cloned', path: 'ref.md' }), { content: 'r' });
});
