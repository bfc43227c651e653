import t from 'tap';
import { type InstalledSkill, SKILL_LIMITS, skillIndex } from '../../../core/skills/installed-skills.js';

const HEADER = 'Installed skills (load one with load_skill before following it):';

function skill(name: string, description: string): InstalledSkill {
  const folder = { root: '/home/me/.magi/skills', components: [name], hidden: [] };
  return { name, description, body: `body of ${name}`, folder, files: [], filesTruncated: false };
}

t.test('no skills, no index', async (t) => {
  t.equal(skillIndex([]), '');
});

t.test('the index of three skills', async (t) => {
  const skills = [
    skill('deploy', 'Ship a release to production.'),
    skill('draft-notes', 'Write release notes from the merged changes.'),
    skill('review', 'Review a diff for bugs and style.'),
  ];
  t.equal(
    skillIndex(skills),
    'Installed skills (load one with load_skill before following it):\n' +
      '- deploy: Ship a release to production.\n' +
      '- draft-notes: Write release notes from the merged changes.\n' +
      '- review: Review a diff for bugs and style.',
  );
});

t.test('a description spanning lines stays on its skill line', async (t) => {
  t.equal(
    skillIndex([skill('a', 'one\ntwo\r\n\tthree\u2028four\u0085five')]),
    `${HEADER}\n- a: one two three four five`,
  );
});

/** Skills whose index lines take `lineBytes` each (newline included), the last one `lastExtra` more. */
function skillsOfLines(count: number, lineBytes: number, lastExtra = 0): InstalledSkill[] {
  return Array.from({ length: count }, (_, i) => {
    const name = `s${String(i).padStart(3, '0')}`;
    const fixed = `\n- ${name}: `.length;
    return skill(name, 'd'.repeat(lineBytes - fixed + (i === count - 1 ? lastExtra : 0)));
  });
}

t.test('an index of exactly index_bytes lists every skill', async (t) => {
  const lineBytes = 256;
  const count = Math.floor((SKILL_LIMITS.index_bytes - HEADER.length) / lineBytes);
  const rest = SKILL_LIMITS.index_bytes - HEADER.length - count * lineBytes;
  const index = skillIndex(skillsOfLines(count, lineBytes, rest));
  t.equal(Buffer.byteLength(index), SKILL_LIMITS.index_bytes);
  t.equal(index.split('\n').length, count + 1);
  t.notMatch(index, 'not listed');
});

t.test('skills past index_bytes are left out and counted', async (t) => {
  const lineBytes = 256;
  const count = Math.floor((SKILL_LIMITS.index_bytes - HEADER.length) / lineBytes);
  const rest = SKILL_LIMITS.index_bytes - HEADER.length - count * lineBytes;
  const index = skillIndex(skillsOfLines(count, lineBytes, rest + 1));
  t.ok(Buffer.byteLength(index) <= SKILL_LIMITS.index_bytes);
  const lines = index.split('\n');
  t.equal(lines[0], HEADER);
  t.equal(lines.at(-1), '(1 more not listed)');
  t.equal(lines.length, count + 1);

  const many = skillsOfLines(200, 200);
  const cut = skillIndex(many).split('\n');
  const listed = cut.length - 2;
  t.equal(cut.at(-1), `(${many.length - listed} more not listed)`);
  t.same(
    cut.slice(1, -1),
    many.slice(0, listed).map((s) => `- ${s.name}: ${s.description}`),
  );
  t.ok(Buffer.byteLength(cut.join('\n')) <= SKILL_LIMITS.index_bytes);
  t.ok(Buffer.byteLength(cut.join('\n')) + 200 > SKILL_LIMITS.index_bytes, 'one more line would not fit');
});
