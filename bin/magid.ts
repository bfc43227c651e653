#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { register } from 'node:module';

/** Below this open-files limit, the modules are read a few at a time (Node raised the soft limit to the hard one). */
const FEW_OPEN_FILES = 1_024;

function openFilesLimit(): number {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line?.[1] === undefined || line[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(line[1]);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

// Node reads every import of a module at once: under a low open-files limit (`ulimit -n 200`) the daemon
// could run out of descriptors before it starts. There a hook reads a few modules at a time; elsewhere the
// hook's own thread would only slow the start.
if (openFilesLimit() < FEW_OPEN_FILES) register('./module-reads.js', import.meta.url);
await import('./commands.js');
