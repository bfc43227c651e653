import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../plugins/app.js';

/**
 * The daemon side of the wire bench: the real app, built in process on a throwaway home, listening
 * on a temporary socket. Prints the socket path when ready; exits cleanly when stdin ends, so that a
 * CPU profile (`--cpu-prof`) is written.
 */
const home = mkdtempSync(join(tmpdir(), 'magid-bench-'));
const socketPath = join(home, 'wire.sock');
const app = await buildApp({ home });
await app.listen({ path: socketPath });
process.stdout.write(`${socketPath}\n`);

process.stdin.on('end', async () => {
  await app.close();
  rmSync(home, { recursive: true, force: true });
  process.exit(0);
});
process.stdin.resume();
