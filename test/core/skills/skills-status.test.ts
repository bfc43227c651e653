import t from 'tap';
import type { InstalledSkills } from '../../../core/skills/installed-skills.js';
import { SKILL_LIMITS } from '../../../core/skills/skill-limits.js';
import { skillsStatus } from '../../../core/skills/skills-status.js';

function installed(names: readonly string[], skipped: InstalledSkills['skipped'] = []): InstalledSkills {
  const folder = { root: '/h/skills', components: [], hidden: [] };
  return {
    skills: names.map((name) => ({
      name,
      description: 'd',
      body: '',
      folder,
      files: [],
      filesTruncated: false,
    })),
    skipped,
    cut: [],
  };
}

t.test('loaded names, and skipped skills beside unused entries in one list by path', async (t) => {
  t.same(
    skillsStatus(installed(['docx', 'pdf'], [{ skill: 'anthropic/skills/big', reason: 'too_large' }]), [
      { path: 'anthropic/README.md', reason: 'not_a_skill' },
      { path: '.system', reason: 'hidden' },
    ]),
    {
      loaded: ['docx', 'pdf'],
      skipped: [
        { path: '.system', reason: 'hidden' },
        { path: 'anthropic/README.md', reason: 'not_a_skill' },
        { path: 'anthropic/skills/big', reason: 'too_large' },
      ],
      omitted: 0,
    },
  );
});

/** Names of `bytes` - 3 characters: each takes `bytes` in the JSON list with its quotes and comma. */
function names(count: number, bytes: number): string[] {
  return Array.from({ length: count }, (_, i) => `s${String(i).padStart(bytes - 4, '0')}`);
}

t.test('each list fits status_list_bytes; what it leaves out is counted', async (t) => {
  // 2 brackets, then n names of 64 bytes each with its comma but the first: 1 + 64n bytes.
  const fit = Math.floor((SKILL_LIMITS.status_list_bytes - 1) / 64);
  const atBound = names(fit, 64);
  const exact = skillsStatus(installed(atBound), []);
  t.equal(exact.loaded.length, fit);
  t.equal(exact.omitted, 0);
  t.ok(Buffer.byteLength(JSON.stringify(exact.loaded)) <= SKILL_LIMITS.status_list_bytes);
  const over = skillsStatus(installed(names(fit + 1, 64)), []);
  t.equal(over.loaded.length, fit);
  t.equal(over.omitted, 1);

  const unused = names(fit * 2, 64).map((path) => ({ path, reason: 'not_a_skill' as const }));
  const cut = skillsStatus(installed([]), unused);
  t.ok(Buffer.byteLength(JSON.stringify(cut.skipped)) <= SKILL_LIMITS.status_list_bytes);
  t.equal(cut.skipped.length + cut.omitted, fit * 2);
  t.ok(cut.omitted > 0);
});
