// Module hooks that run the project's TypeScript in the test processes: a `.js` path of the project names
// the `.ts` source beside it when there is one (as the compiler's NodeNext resolution has it), and a `.ts`
// file outside node_modules loads as its compiled JavaScript (typescript-compiler.mjs). Every other module
// passes straight through, so the runner's own hundreds of modules cost the hooks nothing.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compiledTypeScript } from './typescript-compiler.mjs';

/** @param {string} url */
function isProjectFile(url) {
  return url.startsWith('file:') && !url.includes('/node_modules/');
}

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  if (/^(\.\.?\/|\/|file:)/.test(specifier)) {
    // Relative, absolute or a file URL, with the query the runner's module mocks add.
    const target = new URL(specifier, context.parentURL ?? 'file:///');
    if (isProjectFile(target.href) && target.pathname.endsWith('.js')) {
      const source = new URL(target);
      source.pathname = `${target.pathname.slice(0, -'.js'.length)}.ts`;
      if (existsSync(fileURLToPath(source))) {
        return { url: source.href, format: 'module', shortCircuit: true };
      }
    }
  }
  return next(specifier, context);
}

/** @type {import('node:module').LoadHook} */
export async function load(url, context, next) {
  const location = new URL(url);
  if (!isProjectFile(url) || !location.pathname.endsWith('.ts')) return next(url, context);
  location.search = '';
  location.hash = '';
  const source = await compiledTypeScript(fileURLToPath(location));
  return { format: 'module', source, shortCircuit: true };
}
