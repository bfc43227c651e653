import { systemClock } from '../core/clock.js';
import { operationBounds } from '../core/operations/operation-bounds.js';
import {
  OperationLedger,
  type Outcome,
  SharedJson,
  SplicedJson,
} from '../core/operations/operation-ledger.js';

/**
 * What one retained operation costs in the heap, measured: ENTRIES outcomes of each kind are put into a
 * ledger as the daemon puts them (ids and session ids fresh strings, as parsed from a request line; a
 * success's result as its response's encoded JSON), and the heap is measured after a full collection
 * before and after. Beside it, what the ledger charges an entry and what a lookup of it returns (its
 * result, encoded). Run with --expose-gc; prints one JSON object. bench/operations.ts runs it.
 */
const ENTRIES = 50_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

interface Kind {
  name: string;
  method: string;
  scoped: boolean;
  outcome: (index: number) => Outcome | { json: string } | { spliced: SplicedJson };
}

const terminal = JSON.stringify({
  turn_id: 'turn_AbCdEfGhIjKlMnOpQrStUv',
  status: 'completed',
  error: null,
  assistant_text: 'Found it.',
  activity_dropped: 0,
  application_manifest: null,
});

/** One snapshot, as the claims of one session share it while its last terminal stays the same. */
const sharedSnapshot = new SharedJson(
  JSON.stringify({
    turn: null,
    terminal: { ...JSON.parse(terminal), assistant_text: 'x'.repeat(20_000) },
  }),
);

const KINDS: Kind[] = [
  {
    name: 'refused session.claim (unknown_session)',
    method: 'session.claim',
    scoped: false,
    outcome: () => ({ ok: false, error: { code: 'unknown_session', message: 'no such session' } }),
  },
  {
    name: 'session.claim',
    method: 'session.claim',
    scoped: true,
    outcome: (index) => ({
      ok: true,
      result: { grant_generation: index + 1, snapshot: { turn: null, terminal: null } },
    }),
  },
  {
    name: 'session.claim of a session whose last turn wrote 20,000 bytes (its snapshot shared)',
    method: 'session.claim',
    scoped: true,
    outcome: (index) => ({
      spliced: new SplicedJson(`{"grant_generation":${index + 1},"snapshot":`, sharedSnapshot, '}'),
    }),
  },
  {
    name: 'executor.rotate',
    method: 'executor.rotate',
    scoped: false,
    outcome: () => ({
      ok: true,
      result: {
        executor_id: 'exe_AbCdEfGhIjKlMnOpQrStUv',
        executor_generation: 1,
        status: 'rotation_pending',
        pending_timeout_ms: 60_000,
      },
    }),
  },
  {
    name: 'turn.start of a plain turn, settled',
    method: 'turn.start',
    scoped: true,
    outcome: () => ({ json: terminal.replace('AbCd', Math.random().toString(36).slice(2, 6)) }),
  },
];

const large = { operations: ENTRIES * 2, bytes: Number.MAX_SAFE_INTEGER };

function heapUsed(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

/** A fresh string, as the daemon gets each id: parsed from its request line. */
const parsed = (text: string): string => JSON.parse(`"${text}"`) as string;

function measure(kind: Kind) {
  const ledger = new OperationLedger({
    clock: systemClock,
    bounds: {
      ...operationBounds(),
      table: large,
      connection: large,
      refusals: ENTRIES * 2,
      connectionRefusals: ENTRIES * 2,
    },
  });
  const before = heapUsed();
  for (let index = 0; index < ENTRIES; index++) {
    const id = parsed(`op-${String(index).padStart(8, '0')}-${Math.random().toString(36).slice(2, 10)}`);
    const scope = kind.scoped ? parsed(`ses_${String(index % 7).padStart(22, '0')}`) : null;
    ledger.begin(id, kind.method, scope, { account: 'conn_bench', slot: null });
    const outcome = kind.outcome(index);
    settle(ledger, id, outcome);
  }
  const heap = (heapUsed() - before) / ENTRIES;
  const stats = ledger.stats();
  const charged = stats.operations.retained === 0 ? null : stats.operations.bytes / stats.operations.retained;
  return { kind: kind.name, heap, charged, lookup: lookupBytes(ledger, kind) };
}

function settle(ledger: OperationLedger, id: string, outcome: ReturnType<Kind['outcome']>): void {
  if ('json' in outcome) ledger.settleEncoded(id, outcome.json);
  else if ('spliced' in outcome) ledger.settleSpliced(id, outcome.spliced);
  else ledger.settle(id, outcome);
}

/** The encoded size of what operation.lookup answers for one entry of `kind`. */
function lookupBytes(ledger: OperationLedger, kind: Kind): number {
  const id = parsed('op-lookup-sample');
  ledger.begin(id, kind.method, kind.scoped ? parsed(`ses_${'0'.repeat(22)}`) : null, {
    account: 'conn_bench',
    slot: null,
  });
  const outcome = kind.outcome(0);
  settle(ledger, id, outcome);
  const { session_id: _scope, ...answer } = ledger.lookup(id)!;
  return Buffer.byteLength(JSON.stringify(answer));
}

process.stdout.write(`${JSON.stringify({ entries: ENTRIES, kinds: KINDS.map(measure) })}\n`);
