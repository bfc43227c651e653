import { readdirSync } from 'node:fs';
import { nativeAddon } from './native.js';

/**
 * Marks close-on-exec every descriptor this process was started with beyond stdin, stdout and stderr. Node
 * opens its own descriptors that way, but a launcher's leak into the daemon would otherwise pass on to every
 * command and MCP server it starts: an open folder there is a way out of any sandbox. Returns how many were
 * marked. Runs once at startup, before any child exists.
 */
export function closeInheritedOnExec(): number {
  const { closeOnExec } = nativeAddon();
  let marked = 0;
  for (const entry of readdirSync('/proc/self/fd')) {
    const fd = Number(entry);
    if (!Number.isSafeInteger(fd) || fd <= 2) continue;
    try {
      closeOnExec(fd);
      marked += 1;
    } catch {
      // the listing's own descriptor, closed by now
    }
  }
  return marked;
}
