// Module hooks of the test processes: a bundled package's specifiers resolve to its bundle, where they
// would have resolved to the installed package the bundle was made from (not to a copy of another version
// that some dependency keeps in its own node_modules). Plain JavaScript: the hooks thread must not need
// tsx, or a require() of an ES module (c8 requires yargs so) waits on it forever.
import { pathToFileURL } from 'node:url';

/** @type {Map<string, { url: string, installed: string }>} */
let bundled = new Map();

/** @param {{ root: string, entries: Record<string, string> }} data specifier -> bundle file */
export function initialize({ root, entries }) {
  bundled = new Map(
    Object.entries(entries).map(([specifier, file]) => {
      const name = specifier.split('/', specifier.startsWith('@') ? 2 : 1).join('/');
      const installed = pathToFileURL(`${root}/node_modules/${name}/`).href;
      return [specifier, { url: pathToFileURL(file).href, installed }];
    }),
  );
}

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const bundle = bundled.get(specifier);
  return bundle !== undefined && resolved.url.startsWith(bundle.installed)
    ? { url: bundle.url, format: 'module', shortCircuit: true }
    : resolved;
}
