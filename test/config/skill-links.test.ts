import { realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { SkillLinks } from '../../config/skill-links.js';

t.test('a folder of the daemon user is followed; one of another user is not', async (t) => {
  const root = t.testdir({ home: {}, clone: { pdf: {} } });
  const target = join(root, 'clone', 'pdf');
  const owner = statSync(target).uid;
  t.same(new SkillLinks(join(root, 'home'), owner).follow(target, []), { real: realpathSync(target) });
  t.same(new SkillLinks(join(root, 'home'), owner + 1).follow(target, []), { refused: 'link_other_owner' });
});

t.test('a folder on a credential-like path is not followed, whichever component matches', async (t) => {
  const root = t.testdir({ home: {}, '.aws': { skill: {} }, '.config': { gh: { skill: {} } }, plain: {} });
  const links = new SkillLinks(join(root, 'home'));
  t.same(links.follow(join(root, '.aws', 'skill'), []), { refused: 'link_credential_path' });
  t.same(links.follow(join(root, '.config', 'gh', 'skill'), []), { refused: 'link_credential_path' });
  t.same(links.follow(join(root, 'plain'), []), { real: realpathSync(join(root, 'plain')) });
});

t.test(
  'the daemon home, a folder holding it and its state are not followed; the rest of the home is',
  async (t) => {
    const root = t.testdir({ home: { state: { inner: {} }, skills: { kept: {} } } });
    const home = join(root, 'home');
    const links = new SkillLinks(home);
    t.same(links.follow(home, []), { refused: 'link_daemon_home' });
    t.same(links.follow(root, []), { refused: 'link_daemon_home' });
    t.same(links.follow(join(home, 'state'), []), { refused: 'link_daemon_home' });
    t.same(links.follow(join(home, 'state', 'inner'), []), { refused: 'link_daemon_home' });
    t.same(links.follow(join(home, 'skills', 'kept'), []), {
      real: realpathSync(join(home, 'skills', 'kept')),
    });
  },
);

t.test('a folder at or above one the link lies in is a loop; one beside or below is not', async (t) => {
  const root = t.testdir({ home: {}, a: { b: { c: {} }, d: {} } });
  const links = new SkillLinks(join(root, 'home'));
  const chain = [realpathSync(join(root, 'a')), realpathSync(join(root, 'a', 'b'))];
  t.same(links.follow(join(root, 'a'), chain), { refused: 'link_loop' });
  t.same(links.follow(join(root, 'a', 'b'), chain), { refused: 'link_loop' });
  t.same(links.follow(join(root, 'a', 'd'), chain), { real: realpathSync(join(root, 'a', 'd')) });
  t.same(links.follow(join(root, 'a', 'b', 'c'), chain), { real: realpathSync(join(root, 'a', 'b', 'c')) });
});
