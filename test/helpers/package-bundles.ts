import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Packages the test processes load bundled (see bundle-packages.ts): TypeBox alone is 681 ES modules,
 * each of which passes the test runner's and tsx's module hooks, which cost a test file a second of CPU.
 */
export const BUNDLED_PACKAGES = ['typebox'];

/** A bundled package: the version it was made from and each of its specifiers' entry file. */
export interface BundleManifest {
  version: string;
  files: Record<string, string>;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function bundleFolder(name: string): string {
  return join(ROOT, 'node_modules', '.cache', 'magid-test-bundles', name);
}

export function bundleManifest(name: string): string {
  return join(bundleFolder(name), 'manifest.json');
}

export function installedVersion(name: string): string {
  const manifest = join(ROOT, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * Every bundled entry as specifier -> absolute file, of the packages whose bundle was made from the
 * version installed now; a package without one loads as installed.
 */
export function bundledEntries(): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const name of BUNDLED_PACKAGES) {
    const manifest = bundleManifest(name);
    if (!existsSync(manifest)) continue;
    const { version, files } = JSON.parse(readFileSync(manifest, 'utf8')) as BundleManifest;
    if (version === installedVersion(name)) Object.assign(entries, files);
  }
  return entries;
}
