import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: `bin/magid.ts` and `dist/bin/magid.js` are found from here. */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Written by `npm run build` once `dist/` holds every source compiled. */
const BUILT_STAMP = join(PROJECT_ROOT, 'dist', '.built');
const SOURCE_FOLDERS = ['bin', 'client', 'config', 'core', 'plugins', 'routes'];

function newestSource(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function compiledIsCurrent(): boolean {
  try {
    const built = statSync(BUILT_STAMP).mtimeMs;
    return SOURCE_FOLDERS.every((folder) => newestSource(join(PROJECT_ROOT, folder)) <= built);
  } catch {
    return false;
  }
}

const COMPILED = compiledIsCurrent();
/** tsx's loader, from the project root. */
const TSX_LOADER = relative(PROJECT_ROOT, fileURLToPath(import.meta.resolve('tsx')));

/**
 * The node arguments that run `magid` as the tests start it, from any working directory: the compiled
 * `dist/bin/magid.js`, which starts in a third of the time, when `dist/` was built after every source last
 * changed (`npm test` builds it first); else the TypeScript sources through tsx, so that a test never runs
 * stale code. `root` is where the checkout is seen from (another path where it is bound elsewhere).
 */
export function magidArguments(root: string = PROJECT_ROOT): string[] {
  return COMPILED
    ? [join(root, 'dist', 'bin', 'magid.js')]
    : ['--import', join(root, TSX_LOADER), join(root, 'bin', 'magid.ts')];
}
