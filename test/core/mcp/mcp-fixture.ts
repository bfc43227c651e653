import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  MCP_SUPERVISION,
  type McpServerConfig,
  type McpServerEntry,
  McpServers,
} from '../../../core/mcp/mcp-servers.js';
import type { McpStdioServerConfig } from '../../../core/mcp/mcp-types.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';
import { fixtureServerConfig } from '../../helpers/mcp-fixture-server.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

export type FixtureMode =
  | 'normal'
  | 'silent'
  | 'exit'
  | 'many'
  | 'bare'
  | 'refuse'
  | 'stubborn'
  | 'noisy'
  | 'complain'
  | 'unreachable';

export interface Warning {
  fields: Record<string, unknown>;
  message: string;
}

/** A fresh directory, removed after the test. */
export function tempDir(t: Tap): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A server running the fixture in `mode` without the test runner's hooks, noting its events in `notes`. */
export function fixtureServer(
  mode: FixtureMode,
  notes: string,
  overrides: Partial<McpStdioServerConfig> = {},
): McpStdioServerConfig {
  return {
    type: 'stdio',
    ...fixtureServerConfig(mode),
    env: { FIXTURE_NOTES: notes },
    cwd: null,
    start_timeout_ms: 5_000,
    call_timeout_ms: 5_000,
    enabled: true,
    enabled_tools: null,
    disabled_tools: [],
    ...overrides,
  };
}

export interface Harness {
  mcp: McpServers;
  clock: FakeClock;
  warnings: Warning[];
  /** Where the notes are written. */
  home: string;
  /** Where the private working directories are made. */
  scratchRoot: string;
  /** The notes file of server `name`, for `fixtureServer`. */
  notes(name: string): string;
}

/**
 * McpServers over the fake clock for the servers `configure` returns, started; closed after the test,
 * with the clock moved past the kill grace so that a child ignoring SIGTERM cannot hold the teardown.
 */
export function harness(
  t: Tap,
  configure: (notes: (name: string) => string) => Record<string, McpServerConfig | McpServerEntry>,
  scratchRoot: string = tempDir(t),
): Harness {
  const home = tempDir(t);
  const notes = (name: string): string => join(home, `${name}.notes`);
  const clock = fakeClock();
  const warnings: Warning[] = [];
  const servers = Object.fromEntries(
    Object.entries(configure(notes)).map(([name, value]) => [
      name,
      'type' in value ? { config: value } : value,
    ]),
  );
  const mcp = new McpServers({
    clock,
    servers,
    client: { name: 'magid-test', version: '0.0.0' },
    scratchRoot,
    warn: (fields, message) => warnings.push({ fields, message }),
  });
  t.teardown(async () => {
    const closed = mcp.close();
    clock.advance(2 * MCP_SUPERVISION.kill_grace_ms);
    await closed;
  });
  mcp.start();
  return { mcp, clock, warnings, home, scratchRoot, notes };
}

/** Waits in real time (the children run in it) until `check` holds. */
export async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export function stateOf(mcp: McpServers, name: string): string | undefined {
  return mcp.status().find((server) => server.name === name)?.state;
}

export function untilState(mcp: McpServers, name: string, state: string): Promise<void> {
  return until(`${name} ${state}`, () => stateOf(mcp, name) === state);
}

/** The lines a fixture server noted so far. */
export function noted(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

export function untilNoted(file: string, line: string): Promise<void> {
  return until(`"${line}" noted`, () => noted(file).includes(line));
}

/** The pid of every child a fixture server's notes say was started. */
export function startedPids(file: string): number[] {
  return noted(file)
    .filter((line) => line.startsWith('started '))
    .map((line) => Number(line.slice('started '.length)));
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}

/** Whether `pending` has settled once the I/O already due has been handled. */
export async function settled(pending: Promise<unknown>): Promise<boolean> {
  let done = false;
  void pending.then(() => {
    done = true;
  });
  await sleep(50);
  return done;
}
