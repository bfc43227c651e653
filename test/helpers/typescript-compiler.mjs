// The project's TypeScript compiled for the test processes, each file once: esbuild strips the types, the
// output keeps an inline source map to the source (for stack traces and coverage) and is cached by the
// source's path, size and modification time. Plain JavaScript, as the hooks that use it must be.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const CACHE = join(root, 'node_modules', '.cache', 'magid-test-typescript');

const ESBUILD_OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  sourcesContent: false,
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
};

const compilerVersion = JSON.parse(
  await readFile(createRequire(import.meta.url).resolve('esbuild/package.json'), 'utf8'),
).version;
const fingerprint = `${compilerVersion} ${JSON.stringify(ESBUILD_OPTIONS)}`;

/** @type {Promise<typeof import('esbuild')> | undefined} */
let esbuild;

/** Where the compiled form of this version of `path` is kept. */
function cachedFile(path, { size, mtimeMs }) {
  const key = createHash('sha256').update(`${fingerprint}\n${path}\n${size}\n${mtimeMs}`).digest('hex');
  return join(CACHE, `${key}.js`);
}

/**
 * The JavaScript for the TypeScript file at `path`: from the cache, else compiled and kept. Two processes
 * compiling the same file at once each write their own temporary file and rename it into place.
 */
export async function compiledTypeScript(path) {
  const cached = cachedFile(path, await stat(path));
  try {
    return await readFile(cached, 'utf8');
  } catch (error) {
    if (error?.code !== 'ENOENT') throw error;
  }
  esbuild ??= import('esbuild');
  const { transform } = await esbuild;
  const { code } = await transform(await readFile(path, 'utf8'), { ...ESBUILD_OPTIONS, sourcefile: path });
  await mkdir(CACHE, { recursive: true });
  const temporary = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(temporary, code);
  await rename(temporary, cached);
  return code;
}
