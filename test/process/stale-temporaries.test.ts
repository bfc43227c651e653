import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { op } from '../helpers/daemon.js';
import { PROJECT_ROOT, shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

// Three daemons start from the TypeScript sources.
t.setTimeout(120_000);

const HOLD_RENAMES = ['--import', join(PROJECT_ROOT, 'test/process/fixtures/hold-renames.mjs')];
const KEY = 'sk-killed-mid-login-5f1e';
const TEMPORARY = /^\.(credentials|settings)\.json\.[0-9a-f]{12}\.tmp$/;

async function until(t: Test, what: string, condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 20_000) t.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const temporaries = (home: string) => readdirSync(home).filter((name) => TEMPORARY.test(name));

/**
 * Starts a daemon whose renames are held, checks that it removed what an earlier kill left, runs `method`
 * and kills the daemon with SIGKILL once the rename is held: the write's temporary is left behind.
 */
async function killedBeforeRename(
  t: Test,
  dirs: { socket: string; home: string },
  method: string,
  payload: Record<string, unknown>,
  file: string,
): Promise<string> {
  const { magid } = await startDaemon(t, { ...dirs, nodeArgs: HOLD_RENAMES });
  t.same(temporaries(dirs.home), [], 'nothing stale once the daemon is ready');
  const { client } = await connectSocket(dirs.socket);
  await client.initialize([]);
  // Never answered: the daemon dies first.
  client.request(method, payload, { operation: op() }).catch(() => {});
  await until(t, `the rename of ${file}`, () => magid.stderr.includes(`held rename of ${file}`));
  magid.child.kill('SIGKILL');
  t.same(await magid.waitExit(), { code: null, signal: 'SIGKILL' }, `killed during ${method}`);
  const left = temporaries(dirs.home);
  t.equal(left.length, 1, `${method} left its temporary`);
  return readFileSync(join(dirs.home, left[0]!), 'utf8');
}

t.test(
  'a daemon killed between a write and its rename leaves temporaries the next start removes',
  async (t) => {
    const root = shortTempDir(t);
    const dirs = { socket: join(root, 'd.sock'), home: join(root, 'home') };
    const login = { method: 'api_key', api_key: KEY };
    t.match(
      await killedBeforeRename(t, dirs, 'auth.login', login, 'credentials.json'),
      KEY,
      'the key is in it',
    );
    const settings = { workspace: null, changes: { fast: true } };
    await killedBeforeRename(t, dirs, 'settings.update', settings, 'settings.json');

    const { magid } = await startDaemon(t, dirs);
    t.same(temporaries(dirs.home), [], 'none is left once the daemon is ready');
    t.match(
      magid.stderr,
      /"removed":1,.*"msg":"removed temporary files an interrupted write left in the home"/,
    );
    t.notMatch(magid.stderr, KEY);
    const { client } = await connectSocket(dirs.socket);
    await client.initialize([]);
    t.match(await client.call('auth.status'), { ready: false }, 'the key never stored is not used');
    client.close();
    magid.child.kill('SIGTERM');
    t.same(await magid.waitExit(), { code: 0, signal: null });
  },
);
