import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLED_PACKAGES, bundleFolder, bundleManifest, installedVersion } from './package-bundles.js';

/**
 * Run before the tests (`npm test`'s pretest): each package of BUNDLED_PACKAGES is bundled, every export
 * of it an entry of one esbuild build with shared chunks, so that its modules keep one state between
 * entries. A test process then loads the package as a few files instead of hundreds (TypeBox is 681 ES
 * modules, each of them passing the test runner's and tsx's module hooks).
 */
for (const name of BUNDLED_PACKAGES) {
  const folder = bundleFolder(name);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const exported = Object.keys(
    (JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8')) as { exports: object })
      .exports,
  ).filter((subpath) => !subpath.includes('*'));
  const entries: Record<string, string> = {};
  for (const subpath of exported) {
    const specifier = subpath === '.' ? name : `${name}/${subpath.slice(2)}`;
    const entry = join(folder, `entry-${Object.keys(entries).length}.mjs`);
    // `export *` leaves a default export behind.
    const { default: hasDefault } = (await import(specifier)) as { default?: unknown };
    const reexports = hasDefault === undefined ? '' : `export { default } from '${specifier}';\n`;
    writeFileSync(entry, `export * from '${specifier}';\n${reexports}`);
    entries[specifier] = entry;
  }
  const result = await build({
    entryPoints: Object.values(entries),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    outdir: join(folder, 'out'),
    entryNames: '[name]',
    outExtension: { '.js': '.mjs' },
    metafile: true,
    logLevel: 'warning',
  });
  const files = Object.fromEntries(
    Object.entries(entries).map(([specifier, entry]) => [
      specifier,
      join(folder, 'out', entry.slice(folder.length + 1)),
    ]),
  );
  writeFileSync(
    bundleManifest(name),
    JSON.stringify({
      version: installedVersion(name),
      files,
      outputs: Object.keys(result.metafile.outputs).length,
    }),
  );
}
