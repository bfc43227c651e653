// Module hooks of the test processes: a bundled package's specifiers resolve to its bundle. Plain
// JavaScript: the hooks thread must not need tsx, or a require() of an ES module (c8 requires yargs
// so) waits on it forever.
import { pathToFileURL } from 'node:url';

/** @type {Map<string, string>} */
let bundled = new Map();

/** @param {Record<string, string>} entries specifier -> bundle file */
export function initialize(entries) {
  bundled = new Map(
    Object.entries(entries).map(([specifier, file]) => [specifier, pathToFileURL(file).href]),
  );
}

/** @type {import('node:module').ResolveHook} */
export function resolve(specifier, context, next) {
  const url = bundled.get(specifier);
  return url ? { url, format: 'module', shortCircuit: true } : next(specifier, context);
}
