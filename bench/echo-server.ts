import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The baseline of the wire bench: a plain NDJSON server that splits lines, parses each, and writes
 * back one response-shaped line per request: the same envelope and result bytes the daemon sends
 * for `capabilities` (given in BENCH_ECHO_INSTANCE and BENCH_ECHO_RESULT). It batches the responses to one
 * chunk of requests between cork and uncork, as the daemon batches the frames of one tick, so the
 * baseline is the best a plain server does, not a strawman.
 */
const instanceId = process.env.BENCH_ECHO_INSTANCE ?? 'inst_echo';
const resultJson = process.env.BENCH_ECHO_RESULT ?? '{}';
const head = '{"type":"response","id":';
const tail = `,"instance_id":${JSON.stringify(instanceId)},"ok":true,"result":${resultJson}}\n`;

const directory = mkdtempSync(join(tmpdir(), 'magid-bench-echo-'));
const socketPath = join(directory, 'echo.sock');

const server = createServer((socket) => {
  let pending: Buffer | null = null;
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    const bytes = pending === null ? chunk : Buffer.concat([pending, chunk]);
    let start = 0;
    socket.cork();
    for (let newline = bytes.indexOf(0x0a); newline !== -1; newline = bytes.indexOf(0x0a, start)) {
      if (newline > start) {
        const request = JSON.parse(bytes.toString('utf8', start, newline)) as { id?: unknown };
        socket.write(`${head}${JSON.stringify(request.id ?? null)}${tail}`);
      }
      start = newline + 1;
    }
    process.nextTick(() => socket.uncork());
    pending = start < bytes.length ? bytes.subarray(start) : null;
  });
});
server.listen(socketPath, () => process.stdout.write(`${socketPath}\n`));

process.stdin.on('end', () => {
  server.close();
  rmSync(directory, { recursive: true, force: true });
  process.exit(0);
});
process.stdin.resume();
