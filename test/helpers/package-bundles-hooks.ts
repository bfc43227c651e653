import type { ResolveHookContext } from 'node:module';
import { pathToFileURL } from 'node:url';

/** Module hooks of the test processes: a bundled package's specifiers resolve to its bundle. */
let bundled = new Map<string, string>();

export function initialize(entries: Record<string, string>): void {
  bundled = new Map(
    Object.entries(entries).map(([specifier, file]) => [specifier, pathToFileURL(file).href]),
  );
}

type Resolved = { url: string; format?: string | null; shortCircuit?: boolean };

export function resolve(
  specifier: string,
  context: ResolveHookContext,
  next: (specifier: string, context: ResolveHookContext) => Resolved | Promise<Resolved>,
): Resolved | Promise<Resolved> {
  const url = bundled.get(specifier);
  return url ? { url, format: 'module', shortCircuit: true } : next(specifier, context);
}
