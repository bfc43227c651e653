import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../plugins/app.js';
import { serveUntilStdinEnds } from './daemon-child.js';

/**
 * The daemon side of the wire bench: the real app, built in process on a throwaway home, listening
 * on a temporary socket. Prints the socket path when ready; exits cleanly when stdin ends, so that a
 * CPU profile (`--cpu-prof`) is written.
 */
const home = mkdtempSync(join(tmpdir(), 'magid-bench-'));
const app = await buildApp({ home });
await serveUntilStdinEnds(app, home, 'wire.sock');
