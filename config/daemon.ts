import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package's root: the nearest folder above this file with a package.json (works from dist/ too). */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error('package.json not found above the daemon');
  }
}

const manifest = JSON.parse(readFileSync(join(packageRoot(import.meta.dirname), 'package.json'), 'utf8')) as {
  version: string;
};

/** The daemon's name and version, as `initialize` reports them. */
export const DAEMON = { name: 'magid', version: manifest.version } as const;
