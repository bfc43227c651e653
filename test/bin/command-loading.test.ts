import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { magidArguments } from '../helpers/magid-command.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';
import { childEnv, shortTempDir } from '../process/spawn-daemon.js';
import { ENV } from './exec-fixture.js';

/** Every module `magid <args>` loaded, as URLs, and how it exited. */
async function modulesLoaded(
  t: Test,
  args: readonly string[],
): Promise<{ code: number | null; urls: string[] }> {
  const dir = shortTempDir(t);
  const trace = join(dir, 'loaded.txt');
  const hooks = join(dir, 'hooks.mjs');
  const preload = join(dir, 'preload.mjs');
  writeFileSync(trace, '');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
     export async function load(url, context, next) {
       appendFileSync(${JSON.stringify(trace)}, url + '\\n');
       return next(url, context);
     }`,
  );
  writeFileSync(
    preload,
    `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});`,
  );
  const child = spawn(
    '/usr/bin/env',
    [...WITHOUT_TEST_HOOKS, '--import', preload, ...magidArguments(), ...args, '--home', join(dir, 'home')],
    { cwd: dir, env: { ...childEnv(), ...ENV }, stdio: 'ignore' },
  );
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return {
    code,
    urls: readFileSync(trace, 'utf8')
      .split('\n')
      .filter((url) => url !== ''),
  };
}

const DAEMON = /\/(plugins|routes)\/|\/node_modules\/(fastify|better-sqlite3|@modelcontextprotocol)\//;
const CLIENT_LIBRARY = /\/node_modules\/typebox\//;

t.test('magid status loads neither the daemon nor the client library', async (t) => {
  const { code, urls } = await modulesLoaded(t, ['status']);
  t.equal(code, 1, 'no daemon runs for the home');
  t.ok(
    urls.some((url) => /\/bin\/control-client\.[jt]s$/.test(url)),
    'the command itself was loaded',
  );
  t.notOk(
    urls.some((url) => DAEMON.test(url)),
    'no module of the daemon',
  );
  t.notOk(
    urls.some((url) => CLIENT_LIBRARY.test(url)),
    'no module of the client library',
  );
});

t.test('magid sessions loads the client library, not the daemon', async (t) => {
  const { code, urls } = await modulesLoaded(t, ['sessions']);
  t.equal(code, 1, 'no daemon runs for the home');
  t.ok(
    urls.some((url) => /\/bin\/sessions\.[jt]s$/.test(url)),
    'the command itself was loaded',
  );
  t.notOk(
    urls.some((url) => DAEMON.test(url)),
    'no module of the daemon',
  );
});
