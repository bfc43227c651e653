import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * Packages the test processes load bundled: each ES module passes the test runner's module hooks, and
 * TypeBox alone is 681 of them, which cost a test file a second of CPU. zod (with its 64 locales) and
 * zod-to-json-schema are what the MCP SDK loads; uuid, diff, rimraf and mkdirp are the runner's own.
 */
const BUNDLED_PACKAGES = ['typebox', 'zod', 'zod-to-json-schema', 'uuid', 'diff', 'rimraf', 'mkdirp'];

const BUNDLES = join('node_modules', '.cache', 'magid-test-bundles');

/** The subpaths a package exports that a bundle can stand for: not patterns or folders, not its package.json. */
function exportedSubpaths(exports: object): string[] {
  const subpaths = Object.keys(exports);
  // An `exports` of conditions only ({ import, require }) exports the package itself.
  if (!subpaths.some((subpath) => subpath.startsWith('.'))) return ['.'];
  return subpaths.filter(
    (subpath) => !subpath.includes('*') && !subpath.endsWith('/') && subpath !== './package.json',
  );
}

/**
 * Run before the tests (`npm test`'s pretest): each package of BUNDLED_PACKAGES is bundled, every export
 * of it an entry of one esbuild build with shared chunks, so that its modules keep one state between
 * entries. load-package-bundles.mjs then resolves the package's specifiers to the bundle, as long as the
 * installed version is the one it was made from.
 */
rmSync(BUNDLES, { recursive: true, force: true });
for (const name of BUNDLED_PACKAGES) {
  const folder = join(BUNDLES, name.replace('/', '+'));
  mkdirSync(folder, { recursive: true });
  const { version, exports } = JSON.parse(
    readFileSync(join('node_modules', name, 'package.json'), 'utf8'),
  ) as { version: string; exports: object };
  const entries: Record<string, string> = {};
  for (const subpath of exportedSubpaths(exports)) {
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
    // A bundled package another one imports stays one module state: it is left to its own bundle.
    external: BUNDLED_PACKAGES.filter((other) => other !== name).flatMap((other) => [other, `${other}/*`]),
    metafile: true,
    logLevel: 'warning',
  });
  const files = Object.fromEntries(
    Object.entries(entries).map(([specifier, entry]) => [
      specifier,
      join(process.cwd(), folder, 'out', entry.slice(folder.length + 1)),
    ]),
  );
  writeFileSync(
    join(folder, 'manifest.json'),
    JSON.stringify({
      name,
      version,
      files,
      outputs: Object.keys(result.metafile.outputs).length,
    }),
  );
}
