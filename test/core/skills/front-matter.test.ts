import t from 'tap';
import { parseSkillFile } from '../../../core/skills/front-matter.js';

t.test('the closing line may end the file, and then the body is empty', async (t) => {
  t.same(parseSkillFile('---\ndescription: d\n---', 's'), { description: 'd', body: '' });
  t.same(parseSkillFile('---\r\ndescription: d\r\n---\r\n', 's'), { description: 'd', body: '' });
});

t.test('only a line that is exactly --- closes the front matter', async (t) => {
  t.same(parseSkillFile('---\ndescription: d\n--- \n----\n---\nbody', 's'), {
    refused: 'malformed_front_matter',
  });
  t.same(parseSkillFile('---\ndescription: |\n  ---\n  more\n---\nbody', 's'), {
    description: '---\nmore',
    body: 'body',
  });
  t.same(parseSkillFile('---\ndescription: d\n---\nbody\n---\nmore\n', 's'), {
    description: 'd',
    body: 'body\n---\nmore\n',
  });
});

t.test('only leading blank lines of the body are dropped', async (t) => {
  t.same(parseSkillFile('---\ndescription: d\n---\n\n \t\r\n\n  indented\n\n\nend\n\n', 's'), {
    description: 'd',
    body: '  indented\n\n\nend\n\n',
  });
});

t.test('empty front matter and null values are malformed', async (t) => {
  t.same(parseSkillFile('---\n---\nbody', 's'), { refused: 'malformed_front_matter' });
  t.same(parseSkillFile('---\ndescription:\n---\n', 's'), { refused: 'malformed_front_matter' });
  t.same(parseSkillFile('---\nname:\ndescription: d\n---\n', 's'), { refused: 'malformed_front_matter' });
  t.same(parseSkillFile('---\ndescription: d\n...\nname: s\n---\n', 's'), {
    refused: 'malformed_front_matter',
  });
});

t.test('merge keys are not merged and other keys are ignored', async (t) => {
  t.same(parseSkillFile('---\n<<: {description: merged}\n---\n', 's'), { refused: 'no_description' });
  t.same(parseSkillFile('---\n__proto__: {description: x}\n1: one\n[k]: v\ndescription: d\n---\n', 's'), {
    description: 'd',
    body: '',
  });
});

t.test('a number-like name is compared as the string it is written as', async (t) => {
  t.same(parseSkillFile('---\nname: "007"\ndescription: d\n---\n', '007'), { description: 'd', body: '' });
  t.same(parseSkillFile('---\nname: 007\ndescription: d\n---\n', '007'), {
    refused: 'malformed_front_matter',
  });
});
