import t from 'tap';
import { type InstalledSkill, loadSkillText } from '../../../core/skills/installed-skills.js';

const SKILLS: InstalledSkill[] = [
  { name: 'review', description: 'Review a diff.', body: '# Review\n\nSay "why".\n' },
  { name: 'deploy', description: 'Ship it.', body: '' },
];

t.test('a loaded skill gives compact JSON of its name, description and content', async (t) => {
  t.equal(
    loadSkillText(SKILLS, 'review'),
    '{"name":"review","description":"Review a diff.","content":"# Review\\n\\nSay \\"why\\".\\n"}',
  );
  t.equal(loadSkillText(SKILLS, 'deploy'), '{"name":"deploy","description":"Ship it.","content":""}');
});

t.test('a name that is not loaded gives null, compared exactly', async (t) => {
  t.equal(loadSkillText(SKILLS, 'unknown'), null);
  t.equal(loadSkillText(SKILLS, 'Review'), null);
  t.equal(loadSkillText(SKILLS, 'review '), null);
  t.equal(loadSkillText([], 'review'), null);
});
