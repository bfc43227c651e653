import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { HiddenPlaces, isHiddenPath } from '../../../core/confinement/hidden-places.js';

t.test('a folder’s hidden places are those inside it, relative to it', async (t) => {
  const places = new HiddenPlaces(['/home/ada/.m2/settings.xml', '/home/ada/.config/rclone', '/etc/shadow']);
  t.same(places.inside('/home/ada'), ['.m2/settings.xml', '.config/rclone']);
  t.same(places.inside('/home/ada/.config'), ['rclone']);
  t.same(places.inside('/home/ad'), [], 'a prefix of a name is not a folder holding it');
  t.same(places.inside('/'), ['home/ada/.m2/settings.xml', 'home/ada/.config/rclone', 'etc/shadow']);
  t.same(places.inside('/etc/'), ['shadow']);
  t.ok(places.holds('/home/ada/.config/rclone'), 'one of them');
  t.ok(places.holds('/home/ada/.config/rclone/remotes'), 'inside one');
  t.notOk(places.holds('/home/ada/.config'), 'a folder holding one is not hidden itself');
  t.notOk(places.holds('/home/ada/.config/rclone-notes'));
});

t.test('a path is hidden by a credential rule at any depth, or by a place', async (t) => {
  const hidden = ['.m2/settings.xml', '.config/rclone', '.mozilla'];
  t.ok(isHiddenPath(['project', '.env'], []), 'the credential rules need no place');
  t.ok(isHiddenPath(['.m2', 'settings.xml'], hidden));
  t.ok(isHiddenPath(['.config', 'rclone', 'rclone.conf'], hidden), 'beneath a hidden folder');
  t.ok(isHiddenPath(['.mozilla', 'firefox', 'x.default', 'cookies.sqlite'], hidden));
  t.notOk(isHiddenPath(['.m2', 'repository', 'a.jar'], hidden));
  t.notOk(isHiddenPath(['.config', 'rclone-other'], hidden));
  t.notOk(isHiddenPath(['src', 'main.ts'], hidden));
});

t.test(
  'the places of a machine: the home’s credential places and the system’s secrets, links followed',
  async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'magi-hidden-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const home = join(root, 'home');
    mkdirSync(join(home, '.local', 'share'), { recursive: true });
    const keyrings = join(root, 'elsewhere-keyrings');
    mkdirSync(keyrings);
    writeFileSync(join(keyrings, 'login.keyring'), 'x');
    symlinkSync(keyrings, join(home, '.local', 'share', 'keyrings'));
    const linkedHome = join(root, 'linked-home');
    symlinkSync(home, linkedHome);

    const places = await HiddenPlaces.resolve(linkedHome);
    for (const expected of [
      join(home, '.claude', '.credentials.json'),
      join(home, '.local', 'share', 'keyrings'),
      join(home, '.m2', 'settings.xml'),
      join(home, '.mozilla'),
      join(home, '.config', 'rclone'),
      keyrings,
      '/etc/shadow',
    ]) {
      t.ok(places.absolute.includes(expected), expected);
    }
    t.ok(places.holds(join(keyrings, 'login.keyring')), 'where a link leads is hidden too');
    t.same((await HiddenPlaces.resolve(null)).inside(home), [], 'without a home, the system’s alone');
  },
);
