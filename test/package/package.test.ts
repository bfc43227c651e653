import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import t from 'tap';
import { MagidProcess, shortTempDir } from '../process/spawn-daemon.js';
import {
  noCompilerDir,
  PROJECT_ROOT,
  packageEnv,
  packProject,
  runExpectingFailure,
  runIn,
  writeApp,
} from './packed-app.js';

// Packing builds dist/ and the addon's prebuilt; the install is offline, from the npm cache.
t.setTimeout(240_000);

const work = realpathSync(mkdtempSync(join(tmpdir(), 'magi-package-')));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

const FIXTURES = join(PROJECT_ROOT, 'test', 'package', 'fixtures');
const TSC = join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const app = join(work, 'app');
const installed = join(app, 'node_modules', 'magi-daemon');
const prebuilt = join(installed, 'native', 'prebuilds', 'linux-x64', 'node.node');

/** Loads the installed package's addon in a fresh process: which file it loaded, and whether flock works. */
async function loadAddon(): Promise<unknown> {
  const probe = join(work, 'probe.lock');
  writeFileSync(probe, '');
  const script = `
    const native = await import(${JSON.stringify(join(installed, 'dist', 'core', 'endpoint', 'native.js'))});
    const fd = (await import('node:fs')).openSync(process.argv[1], 'r+');
    console.log(JSON.stringify({ path: native.nativeAddonPath(), locked: native.nativeAddon().flock(fd, true, true) }));
  `;
  return JSON.parse(
    (await runIn(app, process.execPath, ['--input-type=module', '-e', script, probe])).stdout,
  );
}

const packed = await packProject(work);
const { tarball } = packed;
const listing = (await runIn(work, 'tar', ['-tzf', tarball])).stdout
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => line.replace(/^package\//, ''));

t.test('npm pack --json prints JSON alone and leaves a dist/ already there in place', async (t) => {
  const report = JSON.parse(packed.stdout) as Array<{ name: string; filename: string; files: unknown[] }>;
  t.match(report, [{ name: 'magi-daemon', filename: basename(tarball) }], 'standard output is the report');
  t.equal(packed.dist.inodeAfter, packed.dist.inodeBefore, 'the same dist/ folder');
  t.ok(packed.dist.strayKept, 'a file of its own is still in it');
  t.notOk(listing.includes('dist/.DS_Store'), 'and is not packed');
});

t.test('the tarball holds what a user runs and reads, and nothing of tests or benches', async (t) => {
  for (const file of [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/bin/magid.js',
    'dist/client/index.js',
    'dist/client/index.d.ts',
    'docs/protocol.md',
    'docs/client.md',
    'native/binding.gyp',
    'native/magi_native.c',
    'native/prebuilds/linux-x64/node.node',
  ]) {
    t.ok(listing.includes(file), `has ${file}`);
  }
  const topLevel = new Set(listing.map((path) => path.split('/')[0]));
  t.same([...topLevel].sort(), ['LICENSE', 'README.md', 'dist', 'docs', 'native', 'package.json']);
  t.same(
    listing.filter((path) => /^(dist\/)?(test|bench|demo|\.ci)\//.test(path)),
    [],
    'no test/, bench/, demo/ or .ci/',
  );
  t.same(
    listing.filter((path) => /\.[cm]?ts$/.test(path) && !/\.d\.[cm]?ts$/.test(path)),
    [],
    'no TypeScript sources',
  );
  t.same(
    listing.filter((path) => /\.test\.|\.map$/.test(path)),
    [],
    'no compiled tests, no source maps',
  );
  t.same(
    listing.filter((path) => path.startsWith('native/build/')),
    [],
    'no build folder of the addon',
  );

  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
  t.equal(manifest.private, undefined, 'publishable');
  t.ok(manifest.repository?.url, 'names its repository');
  t.ok(Array.isArray(manifest.keywords) && manifest.keywords.length > 0, 'has keywords');
});

t.test('the tarball installs into an app offline, with its dependencies and its command', async (t) => {
  const registry = (await runIn(work, 'npm', ['config', 'get', 'registry'])).stdout.trim();
  writeApp(app, tarball, registry);
  // Scripts are left out here so the next test can run the package's own under watch.
  await runIn(app, 'npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund']);
  t.ok(existsSync(join(installed, 'dist', 'client', 'index.js')));
  t.ok(existsSync(join(app, 'node_modules', '.bin', 'magid')), 'magid is linked');
  t.ok(existsSync(join(app, 'node_modules', 'fastify', 'package.json')), 'dependencies are installed');
  t.same(
    await loadAddon(),
    { path: prebuilt, locked: true },
    'the prebuilt loads though no install script ran',
  );
});

t.test('installing the package runs no compiler: the addon comes prebuilt', async (t) => {
  const marker = join(work, 'compiler-ran');
  const tools = noCompilerDir(join(work, 'no-compiler'), marker);
  const env = packageEnv({
    PATH: `${tools}${delimiter}${process.env.PATH ?? ''}`,
    CC: join(tools, 'cc'),
    CXX: join(tools, 'c++'),
  });
  // The package's own install script, as `npm install` runs it (the install above ran none).
  await runIn(app, 'npm', ['rebuild', 'magi-daemon', '--foreground-scripts'], env);
  t.notOk(existsSync(marker), 'no compiler, linker or make ran');
  t.notOk(existsSync(join(installed, 'native', 'build')), 'no native/build folder was created');

  t.same(await loadAddon(), { path: prebuilt, locked: true });

  // The control: without its prebuilt, the same install compiles, and the stand-ins notice.
  const prebuilds = join(installed, 'native', 'prebuilds');
  const aside = join(work, 'prebuilds-aside');
  renameSync(prebuilds, aside);
  const compiling = await runExpectingFailure(app, 'npm', ['rebuild', 'magi-daemon'], {
    ...env,
    // Node's headers, as the project's .npmrc says, so that node-gyp downloads nothing.
    npm_config_nodedir: '/usr',
  });
  t.not(compiling.code, 0, 'an install that must compile fails without a compiler');
  t.ok(existsSync(marker), 'and the stand-ins saw it try');
  rmSync(join(installed, 'native', 'build'), { recursive: true, force: true });
  renameSync(aside, prebuilds);
});

t.test('npx magid --help prints the usage', async (t) => {
  const { stdout } = await runIn(app, 'npx', ['--offline', '--no-install', 'magid', '--help']);
  t.match(stdout, /^Usage: magid \[options\] \[command\]/);
  for (const command of ['serve', 'stdio', 'status', 'stop']) t.match(stdout, new RegExp(`\\n  ${command} `));
});

t.test('the installed daemon serves: its ready line, then a clean stop', async (t) => {
  // better-sqlite3's own install downloads a prebuilt, which cannot be reached here, or compiles SQLite
  // (over a minute): the app gets the project's build of the same version instead.
  const sqliteVersion = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
  const ours = join(PROJECT_ROOT, 'node_modules', 'better-sqlite3');
  const theirs = join(app, 'node_modules', 'better-sqlite3');
  t.equal(sqliteVersion(theirs), sqliteVersion(ours), 'the same better-sqlite3 version');
  mkdirSync(join(theirs, 'build', 'Release'), { recursive: true });
  copyFileSync(
    join(ours, 'build', 'Release', 'better_sqlite3.node'),
    join(theirs, 'build', 'Release', 'better_sqlite3.node'),
  );

  const dir = shortTempDir(t);
  const socket = join(dir, 's.sock');
  const magid = new MagidProcess(
    spawn(
      process.execPath,
      [join(app, 'node_modules', '.bin', 'magid'), 'serve', '--home', join(dir, 'home'), '--socket', socket],
      { cwd: app, env: packageEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  t.teardown(() => {
    if (magid.running) magid.child.kill('SIGKILL');
  });
  const ready = JSON.parse(await magid.firstLine());
  t.match(ready, { ready: true, socket, pid: magid.pid });
  magid.child.kill('SIGTERM');
  t.same(await magid.waitExit(), { code: 0, signal: null });
});

t.test("the client library's types check in a user's TypeScript", async (t) => {
  // A user's app has @types/node of its own; this one borrows the project's.
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
  await runIn(app, 'ln', [
    '-s',
    join(PROJECT_ROOT, 'node_modules', '@types', 'node'),
    'node_modules/@types/node',
  ]);
  const esm = join(app, 'esm');
  mkdirSync(esm);
  writeFileSync(join(esm, 'package.json'), JSON.stringify({ type: 'module' }));
  copyFileSync(join(FIXTURES, 'consumer.ts'), join(esm, 'consumer.ts'));
  copyFileSync(join(FIXTURES, 'consumer.ts'), join(app, 'consumer.ts'));
  copyFileSync(join(FIXTURES, 'commonjs-consumer.cts'), join(app, 'commonjs-consumer.cts'));

  // `skipLibCheck` as `tsc --init` sets it: without it, checking every declaration the client's types reach
  // (fastify's, TypeBox's) takes some 45 s more; the project's own type-check covers the sources they come from.
  const check = (module: string, resolution: string, file: string) =>
    runExpectingFailure(app, process.execPath, [
      TSC,
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--types',
      'node',
      '--module',
      module,
      '--moduleResolution',
      resolution,
      file,
    ]);

  for (const [module, resolution, file, what] of [
    ['nodenext', 'nodenext', 'esm/consumer.ts', 'an ES module app under nodenext'],
    ['node16', 'node16', 'esm/consumer.ts', 'an ES module app under node16'],
    ['esnext', 'bundler', 'esm/consumer.ts', 'an app for a bundler'],
    ['nodenext', 'nodenext', 'consumer.ts', 'a CommonJS app under nodenext (require of an ES module)'],
    ['node16', 'node16', 'commonjs-consumer.cts', 'a CommonJS app under node16 with import()'],
  ] as const) {
    const result = await check(module, resolution, file);
    t.same({ code: result.code, out: result.stdout }, { code: 0, out: '' }, what);
  }

  const refused = await check('node16', 'node16', 'consumer.ts');
  t.equal(refused.code, 2, 'a static import from CommonJS under node16 is refused, as the README says');
  t.match(refused.stdout, /error TS1479/);
});

t.test('a CommonJS app loads the library with require() as well as import()', async (t) => {
  const script = `
    const { MagiClient } = require('magi-daemon/client');
    import('magi-daemon/client').then((m) => console.log(m.MagiClient === MagiClient, typeof m.ToolFailure));
  `;
  const { stdout, stderr } = await runIn(app, process.execPath, ['-e', script]);
  t.equal(stdout, 'true function\n');
  t.equal(stderr, '', 'no warning');
});
