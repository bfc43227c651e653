// Run before the tests (`npm test`'s pretest): every TypeScript file of the project compiled into the cache
// of typescript-compiler.mjs, which is emptied first, so that no test process needs to start the compiler.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CACHE, compiledTypeScript } from './typescript-compiler.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const FOLDERS = ['bench', 'bin', 'client', 'config', 'core', 'demo', 'plugins', 'routes', 'test'];

/** @param {string} folder @returns {AsyncGenerator<string>} */
async function* typeScriptFiles(folder) {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') yield* typeScriptFiles(path);
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

await rm(CACHE, { recursive: true, force: true });
const compiling = [];
for (const folder of FOLDERS) {
  for await (const path of typeScriptFiles(join(root, folder))) compiling.push(compiledTypeScript(path));
}
await Promise.all(compiling);
console.log(`compiled ${compiling.length} TypeScript files for the tests`);
