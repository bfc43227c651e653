import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';

/**
 * Serves a bench daemon child: listens on `<home>/<socketName>`, prints the socket path (the ready line
 * bench/child-server.ts waits for), and when stdin ends closes the app, removes the home and exits 0, so
 * that a CPU profile (`--cpu-prof`) is written.
 */
export async function serveUntilStdinEnds(
  app: FastifyInstance,
  home: string,
  socketName: string,
): Promise<void> {
  const socketPath = join(home, socketName);
  await app.listen({ path: socketPath });
  process.stdout.write(`${socketPath}\n`);
  process.stdin.on('end', async () => {
    await app.close();
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  });
  process.stdin.resume();
}
