import { execFile } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The project root: the nearest folder above this file whose package.json is this package's, so the
 * lookup holds from the TypeScript sources (test/package/) and from a compiled tree (build/test/package/).
 */
export const PROJECT_ROOT = (() => {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(directory, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'magi-daemon')
      return directory;
    const parent = dirname(directory);
    if (parent === directory) throw new Error('no magi-daemon package.json above the test');
    directory = parent;
  }
})();

/** What a checkout holds that is not its source: never copied into the folder that is packed. */
const NOT_SOURCE = new Set([
  'node_modules',
  '.git',
  'dist',
  'build',
  '.tap',
  'coverage',
  'native/build',
  'native/prebuilds',
]);

interface LockEntry {
  version?: string;
  resolved?: string;
  dev?: boolean;
  [key: string]: unknown;
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

/**
 * The environment for npm and node children: nothing of an enclosing npm script, and not the runner's
 * NODE_OPTIONS, whose hooks run the checkout's TypeScript and have no place in an installed app. The test runner's process
 * tracking puts its own NODE_OPTIONS back into any child whose environment has none, so this one has an
 * option that changes nothing the test looks at.
 */
export function packageEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NODE_OPTIONS: '--enable-source-maps' };
  for (const [name, value] of Object.entries(process.env)) {
    // Coverage of npm, tsc and a copy of the package outside the checkout is nothing to collect.
    if (name === 'NODE_OPTIONS' || name === 'NODE_V8_COVERAGE' || name === 'INIT_CWD') continue;
    if (name.startsWith('npm_package_') || name.startsWith('npm_lifecycle_')) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

export interface Ran {
  stdout: string;
  stderr: string;
}

export async function runIn(
  cwd: string,
  file: string,
  args: readonly string[],
  env = packageEnv(),
): Promise<Ran> {
  const { stdout, stderr } = await run(file, args, {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { stdout, stderr };
}

/** A command that may fail: its exit code and output, for a test that expects a failure. */
export async function runExpectingFailure(
  cwd: string,
  file: string,
  args: readonly string[],
  env = packageEnv(),
) {
  try {
    const ran = await runIn(cwd, file, args, env);
    return { code: 0, ...ran };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** What packing printed and did to the copy's `dist/`. */
export interface Packed {
  tarball: string;
  /** `npm pack --json`'s standard output, untouched. */
  stdout: string;
  /** The copy's `dist/` before packing and after: its inode, and whether a stray file in it is still there. */
  dist: { inodeBefore: number; inodeAfter: number; strayKept: boolean };
}

/**
 * Packs the project as `npm pack --json` does for a publish, in a copy of the checkout (so that building the
 * prebuilt and `dist/` does not touch the checkout other tests load the addon from), with the checkout's
 * node_modules linked in. The copy has a `dist/` beforehand, as a developer's checkout does, holding a
 * stray file npm never packs.
 */
export async function packProject(workDir: string): Promise<Packed> {
  const source = join(workDir, 'source');
  cpSync(PROJECT_ROOT, source, {
    recursive: true,
    filter: (path) => !NOT_SOURCE.has(relative(PROJECT_ROOT, path).split(sep).join('/')),
  });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(source, 'node_modules'));
  const dist = join(source, 'dist');
  const stray = join(dist, '.DS_Store');
  mkdirSync(dist);
  writeFileSync(stray, '');
  const inodeBefore = statSync(dist).ino;
  const packed = join(workDir, 'packed');
  mkdirSync(packed);
  const { stdout } = await runIn(source, 'npm', ['pack', '--json', '--pack-destination', packed]);
  const [tarball] = readdirSync(packed).filter((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack wrote no tarball');
  return {
    tarball: join(packed, tarball),
    stdout,
    dist: { inodeBefore, inodeAfter: statSync(dist).ino, strayKept: existsSync(stray) },
  };
}

/**
 * An application that depends on the tarball alone, with a lockfile that pins its dependencies to the
 * versions the project's own lockfile resolved (each at its registry address), so `npm ci --offline`
 * installs it from the npm cache an install of the project filled.
 */
export function writeApp(appDir: string, tarball: string, registry: string): void {
  const project = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
  const spec = `file:${relative(appDir, tarball)}`;
  const packages: Record<string, LockEntry> = {
    '': { name: 'app', version: '1.0.0', dependencies: { 'magi-daemon': spec } },
    'node_modules/magi-daemon': {
      version: manifest.version,
      resolved: spec,
      hasInstallScript: true,
      license: manifest.license,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  const base = registry.replace(/\/+$/, '');
  for (const [path, entry] of Object.entries(project.packages)) {
    if (path === '' || entry.dev === true) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const file = `${name.split('/').pop()}-${entry.version}.tgz`;
    packages[path] = { ...entry, resolved: entry.resolved ?? `${base}/${name}/-/${file}` };
  }
  mkdirSync(appDir, { recursive: true });
  // What `npm init -y` makes: a CommonJS package.
  writeFileSync(
    join(appDir, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, dependencies: { 'magi-daemon': spec } }),
  );
  writeFileSync(
    join(appDir, 'package-lock.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true, packages }),
  );
}

/**
 * A folder of stand-ins for a C toolchain that record that they ran and fail, so an install that tries
 * to compile anything fails and says so.
 */
export function noCompilerDir(dir: string, marker: string): string {
  mkdirSync(dir, { recursive: true });
  for (const tool of ['cc', 'gcc', 'c++', 'g++', 'clang', 'make', 'ld']) {
    const path = join(dir, tool);
    writeFileSync(path, `#!/bin/sh\necho "$0" >> '${marker}'\nexit 1\n`);
    chmodSync(path, 0o755);
  }
  return dir;
}
