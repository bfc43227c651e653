// Loaded with --import after tsx by `npm test` into every test process and every node child of one: the
// specifiers of each package bundled by bundle-packages.ts resolve to its bundle, if the bundle was made
// from the version installed now. Plain JavaScript, as is its hooks file: with a TypeScript module among
// the --import preloads, a require() of an ES module (c8 requires yargs so) never returns on Node 20.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bundles = join(root, 'node_modules', '.cache', 'magid-test-bundles');

/** @type {Record<string, { url: string, installed: string }>} */
const entries = {};
for (const folder of existsSync(bundles) ? readdirSync(bundles) : []) {
  const manifestFile = join(bundles, folder, 'manifest.json');
  if (!existsSync(manifestFile)) continue;
  /** @type {{ name: string, version: string, files: Record<string, string> }} */
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  const installed = join(root, 'node_modules', manifest.name);
  const installedManifest = join(installed, 'package.json');
  if (!existsSync(installedManifest)) continue;
  if (JSON.parse(readFileSync(installedManifest, 'utf8')).version !== manifest.version) continue;
  for (const [specifier, file] of Object.entries(manifest.files)) {
    entries[specifier] = { url: pathToFileURL(file).href, installed: pathToFileURL(`${installed}/`).href };
  }
}
if (Object.keys(entries).length > 0) {
  register('./package-bundles-hooks.mjs', import.meta.url, { data: entries });
}
