import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptureThread } from '../core/capture/capture-thread.js';
import { captureWorkspaceFile } from '../core/capture/workspace-file.js';
import type { WorkspaceReader } from '../core/capture/workspace-reader.js';
import { systemClock } from '../core/clock.js';
import type { ConfinedWorkspace } from '../core/confinement/confined-workspace.js';
import { WireError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { PROFILE_LIMITS } from '../core/limits.js';
import { parseRegisterPayload } from '../core/registry/registry-payloads.js';
import { ResourceRegistry } from '../core/registry/resource-registry.js';
import { type RegisteredBy, ResourceRevision } from '../core/registry/resource-revision.js';
import { NameCatalog } from '../core/resources/names.js';
import type { ResourceInput, ResourceSource } from '../core/resources/resource-input.js';
import { contentSha256, revisionSha256 } from '../core/resources/revision-hash.js';
import { parseStrictJson } from '../core/resources/strict-json.js';
import { parseToolContract } from '../core/resources/tool-contract.js';
import { decodeUtf8Exact } from '../core/resources/unicode.js';
import { benchOptions } from './cli-options.js';
import { countFsCalls } from './fs-call-count.js';
import { loadAverage, printTable } from './report.js';
import { median } from './stats.js';
import { toolContractOfExactly } from './tool-contract-fixture.js';

/**
 * Capture bench: tool registrations per second through the registry domain, in process (no socket), from
 * an inline source and from a workspace file of the tool source maximum, against a plain
 * `readFile` + sha256 of the same file measured in the same run. A registration is the whole staged path:
 * `beginRegistration` → `capture()` → `publish()`, each one replacing the same resource with its current
 * revision as `expected_revision`, so the registry keeps one entry and the budgets stay where they are.
 * A measurement: it exits 0 whatever the ratio.
 */
const USAGE = `usage: node --import tsx bench/capture.ts [options]
  --seconds <n>            measured seconds per run (default 2)
  --warmup <n>             warm-up seconds before each measured window (default 0.5)
  --rounds <n>             rounds, each running both baselines and both registration modes back to back,
                           alternating the order; medians are reported, each ratio as the median of the
                           rounds' ratios (default 5)
  --breakdown-seconds <n>  measured seconds per step of the cost breakdown, 0 to skip it (default 1)`;

const { values, numberOption } = benchOptions(USAGE, {
  seconds: { type: 'string', default: '2' },
  warmup: { type: 'string', default: '0.5' },
  rounds: { type: 'string', default: '5' },
  'breakdown-seconds': { type: 'string', default: '1' },
} as const);
const measureMs = numberOption('seconds', values.seconds, {}) * 1_000;
const warmupMs = numberOption('warmup', values.warmup, { zero: true }) * 1_000;
const rounds = numberOption('rounds', values.rounds, { integer: true });
const breakdownMs = numberOption('breakdown-seconds', values['breakdown-seconds'], { zero: true }) * 1_000;

const SOURCE_BYTES = PROFILE_LIMITS.tool_source_bytes;
const SOURCE_PATH = 'tools/contract.json';
const RESOURCE_NAME = 'bench_contract';
const DESCRIPTION = 'A tool contract at the tool source maximum, registered again and again.';
/**
 * A revision is charged its captured bytes, its normalized contract and its descriptor, so no tool source
 * of the full 32 KiB fits the profile's 32 KiB registry (the spec says source maxima do not guarantee
 * admission). The bench raises only this bound; the work of a registration does not depend on it.
 */
const BENCH_REGISTRY_BYTES = 2 * PROFILE_LIMITS.registry_bytes;

const REGISTERED_BY: RegisteredBy = {
  instance_id: newId('ins'),
  connection_id: newId('con'),
  operation_id: newId('op'),
  grant_generation: 1,
};
const stillAuthorized = () => true;

type SyncOp = () => unknown;
type AsyncOp = () => Promise<unknown>;

function runSync(op: SyncOp, warmup: number, measure: number): number {
  const warmEnd = performance.now() + warmup;
  while (performance.now() < warmEnd) op();
  const start = performance.now();
  const end = start + measure;
  let count = 0;
  let now = start;
  do {
    op();
    count++;
    now = performance.now();
  } while (now < end);
  return count / ((now - start) / 1_000);
}

/** One operation at a time, as registrations go through the daemon's single capture slot. */
async function runAsync(op: AsyncOp, warmup: number, measure: number): Promise<number> {
  const warmEnd = performance.now() + warmup;
  while (performance.now() < warmEnd) await op();
  const start = performance.now();
  const end = start + measure;
  let count = 0;
  let now = start;
  do {
    await op();
    count++;
    now = performance.now();
  } while (now < end);
  return count / ((now - start) / 1_000);
}

const integer = (value: number) => Math.round(value).toLocaleString('en-US');
const micros = (opsPerSecond: number) => (1e6 / opsPerSecond).toFixed(1);

interface Workspace {
  root: string;
  workspace: string;
  stateDirectory: string;
  filePath: string;
  text: string;
  bytes: Buffer;
}

function createWorkspace(): Workspace {
  const fixture = toolContractOfExactly(SOURCE_BYTES);
  const root = mkdtempSync(join(tmpdir(), 'magi-capture-bench-'));
  const workspace = join(root, 'workspace');
  // The daemon always excludes its state; a sibling of the workspace makes the capture check its ancestors.
  const stateDirectory = join(root, 'state');
  mkdirSync(join(workspace, 'tools'), { recursive: true });
  mkdirSync(stateDirectory);
  const filePath = join(workspace, SOURCE_PATH);
  writeFileSync(filePath, fixture.text);
  const bytes = readFileSync(filePath);
  if (bytes.length !== SOURCE_BYTES) throw new Error(`the contract file is ${bytes.length} bytes`);
  console.log(
    `tool contract: ${bytes.length.toLocaleString('en-US')} bytes, valid; ` +
      `${fixture.structureBytes.toLocaleString('en-US')} bytes of structure ` +
      `(2 schemas × ${fixture.propertiesPerSchema} properties with 48-byte names, ` +
      `${fixture.requiredPerSchema} required each), pretty-printed with indent ${fixture.indent}, ` +
      `${fixture.trailingWhitespaceBytes} bytes of trailing whitespace`,
  );
  return { root, workspace, stateDirectory, filePath, text: fixture.text, bytes };
}

interface Registrar {
  register(): Promise<void>;
  /** The retained bytes of the one live revision, read between registrations. */
  chargedBytes(): number;
}

function registrar(ws: Workspace, source: ResourceSource, reader: WorkspaceReader): Registrar {
  // The bench's workspace, pinned as session.create pins one.
  const ownWorkspace = pinnedAt(ws.workspace);
  const registry = new ResourceRegistry({
    clock: systemClock,
    catalog: () => catalog,
    workspaceOf: () => ownWorkspace,
    excludedDirectories: [ws.stateDirectory],
    reader,
    limits: { registry_bytes: BENCH_REGISTRY_BYTES },
  });
  const catalog = new NameCatalog();
  const sessionId = newId('ses');
  let expected: string | null = null;
  return {
    async register() {
      const staged = registry.beginRegistration(
        sessionId,
        {
          expected_revision: expected,
          resource: { kind: 'tool', name: RESOURCE_NAME, description: DESCRIPTION, source },
        },
        REGISTERED_BY,
        stillAuthorized,
      );
      await staged.capture();
      expected = staged.publish().entry.revision_id;
    },
    chargedBytes: () => registry.stats().retained_bytes,
  };
}

type Subject = 'readFile' | 'readFileSync' | 'inline' | 'workspace_file';
const SUBJECTS: readonly Subject[] = ['readFile', 'readFileSync', 'inline', 'workspace_file'];

interface Subjects {
  readFileSync: SyncOp;
  async: Record<Exclude<Subject, 'readFileSync'>, AsyncOp>;
}

function captureOptionsOf(ws: Workspace) {
  return {
    workspace: ws.workspace,
    path: SOURCE_PATH,
    maxBytes: SOURCE_BYTES,
    excludedDirectories: [ws.stateDirectory],
  };
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function measureRounds(subjects: Subjects): Promise<Record<Subject, number[]>> {
  const samples: Record<Subject, number[]> = {
    readFile: [],
    readFileSync: [],
    inline: [],
    workspace_file: [],
  };
  for (let round = 0; round < rounds; round++) {
    // Alternating the order spreads any drift of the machine over every subject.
    const order = round % 2 === 0 ? SUBJECTS : [...SUBJECTS].reverse();
    const sample: Partial<Record<Subject, number>> = {};
    for (const subject of order) {
      sample[subject] =
        subject === 'readFileSync'
          ? runSync(subjects.readFileSync, warmupMs, measureMs)
          : await runAsync(subjects.async[subject], warmupMs, measureMs);
      samples[subject].push(sample[subject]);
    }
    console.log(
      `  round ${round + 1}: ` +
        SUBJECTS.map((subject) => `${subject} ${integer(sample[subject]!)}/s`).join(', '),
    );
  }
  return samples;
}

function printResults(samples: Record<Subject, number[]>): void {
  const ratioOf = (mode: Subject, baseline: Subject) =>
    median(samples[mode].map((ops, round) => ops / samples[baseline][round]!));
  const rows = (['inline', 'workspace_file'] as const).map((mode) => [
    mode,
    integer(median(samples[mode])),
    micros(median(samples[mode])),
    integer(median(samples.readFile)),
    ratioOf(mode, 'readFile').toFixed(2),
    integer(median(samples.readFileSync)),
    ratioOf(mode, 'readFileSync').toFixed(2),
  ]);
  printTable(
    ['mode', 'ops/s', 'µs/op', 'readFile+sha256 ops/s', 'ratio', 'readFileSync+sha256 ops/s', 'ratio (sync)'],
    rows,
  );
  console.log(
    '\nratio: registrations per second ÷ baseline operations per second, the median of the rounds’ ratios; ' +
      'the headline baseline is the async readFile.',
  );
}

function describeRegistration(fsCalls: Map<string, number>, chargedBytes: number): void {
  const total = [...fsCalls.values()].reduce((sum, count) => sum + count, 0);
  const calls = [...fsCalls].map(([name, count]) => `${name} ${count}`).join(', ');
  const kib = (SOURCE_BYTES / 1_024).toFixed(0);
  console.log(`
what one workspace_file registration does (beginRegistration → capture → publish, a replacement):
  admission   payload shape, name against the catalog, expected revision, kind and byte budgets,
              the capture slot (and its ${PROFILE_LIMITS.capture_reservation_bytes / 1_024} KiB reservation)
  walk        on the capture worker thread: ${total} synchronous fs calls (${calls}):
              the workspace root, the directory component, then the file by lstat, open, fstat and the
              read; the bytes go to the main thread at once, then the checks that can only refuse them run:
              the root through /proc/self/fd, every directory and ancestor up to / against the excluded
              state directory, and fstat + lstat of the file again
  read        ${kib} KiB into a buffer of the file's size plus one byte, checked for NUL afterwards
  UTF-8       checked once, by the capture thread; the contract rules take the text it decoded
  JSON        on the main thread while the worker walks up and hashes: JSON.parse, then the schema rules
              on its result, whose members are counted against the text's colons (no repeated name)
  schema      2 × 64 properties (names, types, bounds), 2 × 32 required, timeout; frozen
  hashes      2 × sha256 on the capture thread: content (${kib} KiB), revision (domain +
              length-prefixed kind, name, description and the ${kib} KiB, fed piece by piece)
  descriptor  a fresh revision id (random bytes), the descriptor as JSON and the normalized contract's
              JSON length for the exact charge (${chargedBytes.toLocaleString('en-US')} bytes for this revision)
  publish     guard, registry, expected revision and catalog checked again, budgets, entry replaced
an inline registration does the same without walk and read, all on the main thread: admission scans the
  ${kib} KiB string for well-formed text and measures it, capture encodes it to UTF-8 bytes and hashes them.
the baseline: readFile (open, fstat, read, close, each a round trip to the thread pool) + 1 × sha256;
  readFileSync the same calls on the main thread.`);
}

async function printBreakdown(ws: Workspace, subjects: Subjects): Promise<void> {
  const inlineInput: ResourceInput = {
    kind: 'tool',
    name: RESOURCE_NAME,
    description: DESCRIPTION,
    source: { kind: 'inline', content: ws.text },
  };
  const inlinePayload = { expected_revision: null, resource: inlineInput };
  const captureOptions = captureOptionsOf(ws);
  const steps: [string, SyncOp | AsyncOp][] = [
    ['inline admission: payload check (text scan)', () => parseRegisterPayload(inlinePayload)],
    ['capture: walk, stats, read, UTF-8, NUL', () => captureWorkspaceFile(captureOptions)],
    ['UTF-8 check (decode)', () => decodeUtf8Exact(ws.bytes)],
    ['JSON.parse', () => JSON.parse(ws.text)],
    ['exact strict JSON parser (for what JSON.parse cannot be trusted with)', () => parseStrictJson(ws.text)],
    ['contract: UTF-8 + JSON.parse + schema + colons', () => parseToolContract(ws.bytes)],
    ['content sha256', () => contentSha256(ws.bytes)],
    [
      'revision sha256 (with preimage)',
      () =>
        revisionSha256({ kind: 'tool', name: RESOURCE_NAME, description: DESCRIPTION, captured: ws.bytes }),
    ],
    [
      'revision: contract, 2 hashes, descriptor, charge',
      () =>
        ResourceRevision.capture({
          resourceId: 'res_bench',
          input: inlineInput,
          captured: ws.bytes,
          registeredBy: REGISTERED_BY,
        }),
    ],
    ['whole registration, inline', subjects.async.inline],
    ['whole registration, workspace_file', subjects.async.workspace_file],
    ['baseline: readFileSync + sha256', subjects.readFileSync],
    ['baseline: readFile + sha256', () => readFile(ws.filePath).then(sha256Hex)],
  ];
  const rows: string[][] = [];
  for (const [name, op] of steps) {
    const probe = op();
    let ops: number;
    if (probe instanceof Promise) {
      await probe;
      ops = await runAsync(op as AsyncOp, warmupMs, breakdownMs);
    } else {
      ops = runSync(op, warmupMs, breakdownMs);
    }
    rows.push([name, micros(ops), integer(ops)]);
  }
  console.log(`\ncost breakdown, each step alone on the same ${SOURCE_BYTES.toLocaleString('en-US')} bytes:`);
  printTable(['step', 'µs/op', 'ops/s'], rows);
}

async function main(): Promise<void> {
  const ws = createWorkspace();
  const reader = new CaptureThread(systemClock);
  try {
    const inline = registrar(ws, { kind: 'inline', content: ws.text }, reader);
    const workspaceFile = registrar(ws, { kind: 'workspace_file', path: SOURCE_PATH }, reader);
    // The first registration creates the resource; every measured one replaces it.
    await inline.register();
    await workspaceFile.register();
    // The worker thread makes exactly the calls of one capture, which are counted here on this thread.
    const fsCalls = countFsCalls(() => captureWorkspaceFile(captureOptionsOf(ws)));
    const subjects: Subjects = {
      readFileSync: () => sha256Hex(readFileSync(ws.filePath)),
      async: {
        readFile: () => readFile(ws.filePath).then(sha256Hex),
        inline: () => inline.register(),
        workspace_file: () => workspaceFile.register(),
      },
    };
    console.log(
      `registry bytes raised to ${BENCH_REGISTRY_BYTES / 1_024} KiB for the bench (profile ` +
        `${PROFILE_LIMITS.registry_bytes / 1_024} KiB); the workspace is ${ws.workspace}`,
    );
    console.log(
      `${rounds} round(s) of ${warmupMs / 1_000} s warm-up + ${measureMs / 1_000} s measured per subject; ` +
        `node ${process.version}, ${availableParallelism()} cpus, load average ${loadAverage()}\n`,
    );
    const samples = await measureRounds(subjects);
    console.log(`\nmedians over ${rounds} round(s); load average now ${loadAverage()}\n`);
    printResults(samples);
    describeRegistration(fsCalls, workspaceFile.chargedBytes());
    if (breakdownMs > 0) await printBreakdown(ws, subjects);
  } finally {
    await reader.close(0);
    rmSync(ws.root, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  const detail =
    error instanceof WireError
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
  console.error(`bench failed: ${detail}`);
  process.exitCode = 1;
}

function pinnedAt(path: string): ConfinedWorkspace {
  const real = realpathSync(path);
  const { dev, ino } = statSync(real, { bigint: true });
  return { path, real, identity: { dev: String(dev), ino: String(ino) }, hidden: [] };
}
