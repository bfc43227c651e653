import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

/** The synchronous file-system calls a workspace capture makes. */
const COUNTED = ['openSync', 'closeSync', 'fstatSync', 'lstatSync', 'statSync', 'readSync'] as const;
type Counted = (typeof COUNTED)[number];

/**
 * Runs `action` once with the counted `node:fs` functions wrapped, and returns how often each was called
 * (named without the `Sync` suffix, in the order listed). The wrappers reach modules that imported the
 * functions by name through `syncBuiltinESMExports`; the originals are back before this returns.
 */
export function countFsCalls(action: () => void): Map<string, number> {
  const counts = new Map<string, number>(COUNTED.map((name) => [name.replace(/Sync$/, ''), 0]));
  const module = fs as unknown as Record<Counted, (...args: unknown[]) => unknown>;
  const originals = COUNTED.map((name) => [name, module[name]] as const);
  for (const [name, original] of originals) {
    const label = name.replace(/Sync$/, '');
    module[name] = (...args: unknown[]) => {
      counts.set(label, (counts.get(label) ?? 0) + 1);
      return original(...args);
    };
  }
  syncBuiltinESMExports();
  try {
    action();
  } finally {
    for (const [name, original] of originals) module[name] = original;
    syncBuiltinESMExports();
  }
  return counts;
}
