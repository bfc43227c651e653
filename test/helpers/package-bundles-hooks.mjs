// Module hooks of the test processes: a bundled package's specifiers resolve to its bundle, where they
// would have resolved to the installed package the bundle was made from (not to a copy of another version
// that some dependency keeps in its own node_modules). Plain JavaScript: the hooks thread must not need
// tsx, or a require() of an ES module (c8 requires yargs so) waits on it forever.

/** @type {Map<string, { url: string, installed: string }>} */
let bundled = new Map();

/** @param {Record<string, { url: string, installed: string }>} entries by specifier: the bundle's URL and the installed package's folder URL */
export function initialize(entries) {
  bundled = new Map(Object.entries(entries));
}

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  const bundle = bundled.get(specifier);
  if (bundle === undefined) return next(specifier, context);
  const resolved = await next(specifier, context);
  return resolved.url.startsWith(bundle.installed)
    ? { url: bundle.url, format: 'module', shortCircuit: true }
    : resolved;
}
