import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortTempDir } from '../process/spawn-daemon.js';
import { CACHE, compiledTypeScript as compile } from './typescript-compiler.mjs';

/** The cache's entries holding `text`. */
function entriesWith(text: string): string[] {
  if (!existsSync(CACHE)) return [];
  return readdirSync(CACHE).filter((name) => readFileSync(join(CACHE, name), 'utf8').includes(text));
}

t.test(
  'a TypeScript file compiles once to JavaScript with its source map, and again once it changes',
  async (t) => {
    const file = join(shortTempDir(t), 'typed.ts');
    const value = Date.now();
    writeFileSync(file, `export const answer: number = ${value};\n`);
    const first = await compile(file);
    t.match(first, new RegExp(`^const answer = ${value};$`, 'm'), 'the types are gone');
    const map = JSON.parse(
      Buffer.from(first.split('sourceMappingURL=data:application/json;base64,')[1]!, 'base64').toString(),
    );
    t.same(map.sources, [file], 'an inline source map names the source');

    const [entry, ...others] = entriesWith(`const answer = ${value};`);
    t.ok(entry, 'the compiled file is kept');
    t.same(others, [], 'once');
    writeFileSync(join(CACHE, entry!), '// kept\n');
    t.equal(await compile(file), '// kept\n', 'the same file again is read from the cache');

    writeFileSync(file, `export const answer: number = ${value + 1};\n`);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    t.match(
      await compile(file),
      new RegExp(`^const answer = ${value + 1};$`, 'm'),
      'a changed file is compiled again',
    );
  },
);
