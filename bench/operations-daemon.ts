import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../plugins/app.js';
import { serveUntilStdinEnds } from './daemon-child.js';
import { BENCH_MODEL } from './turn-fixture.js';

/**
 * The daemon side of the operations bench: the real app with every bound as built (unlike the turn
 * bench's daemon, nothing is raised), on a throwaway home made under BENCH_STATE_DIR (default the OS
 * temp directory), with its provider at BENCH_PROVIDER_URL. Prints the socket path when ready; exits
 * cleanly when stdin ends.
 */
const home = mkdtempSync(join(process.env.BENCH_STATE_DIR || tmpdir(), 'magid-bench-operations-'));
const app = await buildApp({
  home,
  provider: { baseUrl: process.env.BENCH_PROVIDER_URL ?? null, model: BENCH_MODEL, apiKey: null },
});
await serveUntilStdinEnds(app, home, 'operations.sock');
