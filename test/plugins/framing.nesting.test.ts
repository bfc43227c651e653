import fc from 'fast-check';
import t from 'tap';
import type { ResponseFrame, WireClient } from '../../client/wire-client.js';
import { SERVICE_LIMITS, WIRE_LIMITS } from '../../core/limits.js';
import { startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { heldRoute } from '../helpers/held-route.js';

const LIMIT = SERVICE_LIMITS.frame_nesting_depth;
const DEEPEST = 100_000;

/**
 * A `status` request nested `depth` levels deep in all, the envelope included: its payload holds arrays
 * or objects (by the parity of `depth`) down to that level.
 */
function nestedRequest(depth: number): string {
  const id = `n${depth}`;
  if (depth === 1) return `{"type":"request","id":"${id}"}`;
  const inner = depth - 2;
  const value =
    depth % 2 === 0
      ? `${'['.repeat(inner)}${']'.repeat(inner)}`
      : `${'{"a":'.repeat(inner)}${inner > 0 ? '0' : ''}${'}'.repeat(inner)}`;
  const payload = inner === 0 ? '{}' : `{"a":${value}}`;
  return `{"type":"request","id":"${id}","method":"status","session_id":null,"control_token":null,"operation_id":null,"payload":${payload}}`;
}

/** What the daemon must answer an uninitialized connection for a line nested `depth` levels deep. */
function expected(depth: number, line: string): { code: string; id: string | null } {
  if (Buffer.byteLength(line) > WIRE_LIMITS.frame_bytes) return { code: 'limit_exceeded', id: null };
  if (depth === 1) return { code: 'invalid_request', id: `n${depth}` };
  if (depth > LIMIT) return { code: 'invalid_request', id: `n${depth}` };
  return { code: 'not_initialized', id: `n${depth}` };
}

async function answer(client: WireClient, line: string, id: string | null): Promise<ResponseFrame> {
  client.sendRaw(`${line}\n`);
  return id === null ? client.nullResponse() : client.response(id);
}

function depths(): number[] {
  const chosen = new Set<number>();
  for (let depth = 1; depth <= 2 * LIMIT + 2; depth++) chosen.add(depth);
  for (let depth = 2 * LIMIT; depth < DEEPEST; depth = Math.ceil(depth * 1.3)) chosen.add(depth);
  chosen.add(DEEPEST);
  for (const depth of fc.sample(fc.integer({ min: 1, max: DEEPEST }), { numRuns: 60, seed: 18 })) {
    chosen.add(depth);
  }
  return [...chosen].sort((a, b) => a - b);
}

for (const transport of [...TRANSPORTS, 'stdio'] as const) {
  t.test(
    `a frame nested from 1 to ${DEEPEST} levels deep is answered, never fatal (${transport})`,
    async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.open(transport);
      let mismatches = 0;
      for (const depth of depths()) {
        const line = nestedRequest(depth);
        const want = expected(depth, line);
        const got = await answer(client, line, want.id);
        if (got.error?.code !== want.code || got.id !== want.id) {
          mismatches++;
          t.fail(`depth ${depth}: ${got.error?.code ?? 'ok'} for ${want.code}`);
        }
      }
      t.equal(mismatches, 0, 'every depth got its answer');
      t.equal((await client.initialize([])).wire, 2, 'the connection still initializes');
      t.equal((await client.request('status')).ok, true, 'and serves');
    },
  );
}

t.test(
  'a deep line whose safe id is in flight is a duplicate; with a free id, invalid_request',
  async (t) => {
    const held = heldRoute();
    const daemon = await startDaemon(t, { setup: held.setup });
    const client = await daemon.connect('in-process', []);
    client.send('test.hold', {}, { id: 'same' });
    await held.started;
    const deep = `{"type":"request","id":"same","method":"status","payload":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    t.equal((await answer(client, deep, 'same')).error?.code, 'duplicate_request_id');
    held.release();
    t.equal((await client.response('same')).ok, true, 'the original request completes');
    t.equal((await answer(client, deep, 'same')).error?.code, 'invalid_request');
    t.equal((await answer(client, nestedRequest(LIMIT), `n${LIMIT}`)).error?.code, 'invalid_payload');
  },
);
