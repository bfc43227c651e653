import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPERATION_LIMITS, PROFILE_LIMITS } from '../core/limits.js';
import { buildApp } from '../plugins/app.js';
import { serveUntilStdinEnds } from './daemon-child.js';
import { BENCH_MODEL } from './turn-fixture.js';

/**
 * The daemon side of the turn bench: the real app, built in process as bench/wire-daemon.ts builds it,
 * on a throwaway home made under BENCH_STATE_DIR (default the OS temp directory), with its provider at
 * BENCH_PROVIDER_URL. Prints the socket path when ready; exits cleanly when stdin ends, so that a CPU
 * profile (`--cpu-prof`) is written.
 *
 * Two retention bounds are raised to BENCH_RETAINED (default 1,048,576), as bench/capture.ts raises the
 * registry bytes: the operation table (131,072 outcomes as built, 32,768 per connection, two per turn),
 * its shares and its recovery slots, each in bytes too (BENCH_RETAINED KiB), and the turns of reconnect evidence
 * (256 as built), all kept 600 s, so that a measured run is not refused part-way. Nothing a turn does
 * depends on them, except that the evidence store looks at every retained turn at each admission.
 */
const retained = Number(process.env.BENCH_RETAINED ?? 1_048_576);
const operationLimits = OPERATION_LIMITS as Record<keyof typeof OPERATION_LIMITS, number>;
for (const name of Object.keys(operationLimits) as Array<keyof typeof OPERATION_LIMITS>) {
  operationLimits[name] = name.endsWith('bytes') ? retained * 1_024 : retained;
}
(PROFILE_LIMITS as { evidence_turns: number }).evidence_turns = retained;

const home = mkdtempSync(join(process.env.BENCH_STATE_DIR || tmpdir(), 'magid-bench-turn-'));
const app = await buildApp({
  home,
  provider: { baseUrl: process.env.BENCH_PROVIDER_URL ?? null, model: BENCH_MODEL, apiKey: null },
});
await serveUntilStdinEnds(app, home, 'turn.sock');
