import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { CaptureThread } from '../../../core/capture/capture-thread.js';
import type { WorkspaceReader } from '../../../core/capture/workspace-reader.js';
import type { Clock } from '../../../core/clock.js';
import { type ErrorCode, isWireError } from '../../../core/errors.js';
import type { RegistryLimits } from '../../../core/registry/registry-limits.js';
import { ResourceRegistry } from '../../../core/registry/resource-registry.js';
import type { RegisteredBy } from '../../../core/registry/resource-revision.js';
import type {
  RegisterResult,
  RegistrationGuard,
  StagedRegistration,
} from '../../../core/registry/staged-registration.js';
import { NameCatalog } from '../../../core/resources/names.js';
import { pinnedWorkspace } from '../../helpers/confined.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';

/** A tool contract written exactly as the daemon normalizes it, so its normalized bytes equal its source. */
export const TOOL_CONTRACT = JSON.stringify({
  input_schema: {
    type: 'object',
    properties: { path: { type: 'string', maxLength: 200 } },
    required: ['path'],
    additionalProperties: false,
  },
  output_schema: { type: 'object', properties: {}, required: [], additionalProperties: false },
  timeout_ms: 120_000,
});

export function toolContractWithTimeout(timeoutMs: number): string {
  return JSON.stringify({ ...JSON.parse(TOOL_CONTRACT), timeout_ms: timeoutMs });
}

export interface ResourceOptions {
  description?: string;
  content?: string;
}

export function toolResource(name: string, options: ResourceOptions = {}) {
  return {
    kind: 'tool',
    name,
    description: options.description ?? `the ${name} tool`,
    source: { kind: 'inline', content: options.content ?? TOOL_CONTRACT },
  };
}

export function skillResource(name: string, options: ResourceOptions = {}) {
  return {
    kind: 'skill',
    name,
    description: options.description ?? `the ${name} skill`,
    source: { kind: 'inline', content: options.content ?? `Follow the ${name} procedure.` },
  };
}

export function fileResource(kind: 'tool' | 'skill', name: string, path: string) {
  return { kind, name, description: '', source: { kind: 'workspace_file', path } };
}

let operations = 0;

export function attribution(overrides: Partial<RegisteredBy> = {}): RegisteredBy {
  operations += 1;
  return {
    instance_id: 'ins_test',
    connection_id: 'con_test',
    operation_id: `op_${operations}`,
    grant_generation: 1,
    ...overrides,
  };
}

export const always: RegistrationGuard = () => true;

/** For registries that only ever see inline sources: a workspace read is a test bug. */
export const unusedReader: WorkspaceReader = {
  read: () => Promise.reject(new Error('no workspace read was expected')),
  close: async () => true,
};

export interface Fixture {
  registry: ResourceRegistry;
  clock: FakeClock;
  /** The workspace every session uses. */
  workspace: string;
  /** A daemon state directory inside the workspace, which captures must not reach. */
  stateDirectory: string;
  /** Replaces the loaded catalog. */
  setCatalog(catalog: NameCatalog): void;
  begin(sessionId: string, payload: unknown, guard?: RegistrationGuard): StagedRegistration;
  /** begin, capture and publish in one go. */
  register(sessionId: string, payload: unknown, guard?: RegistrationGuard): Promise<RegisterResult>;
  create(sessionId: string, resource: unknown): Promise<RegisterResult>;
}

export interface FixtureOptions {
  limits?: Partial<RegistryLimits>;
  clock?: Clock;
  /** The workspace reader; by default a capture worker thread of the fixture's own. */
  reader?: WorkspaceReader;
}

export function registryFixture(t: Test, options: FixtureOptions = {}): Fixture {
  const clock = fakeClock();
  const base = mkdtempSync(join(tmpdir(), 'registry-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const workspace = join(base, 'ws');
  const stateDirectory = join(workspace, '.magi-state');
  mkdirSync(workspace);
  mkdirSync(stateDirectory);
  let catalog = new NameCatalog();
  const reader = options.reader ?? new CaptureThread(clock);
  const registry = new ResourceRegistry({
    clock: options.clock ?? clock,
    catalog: () => catalog,
    workspaceOf: () => pinnedWorkspace(workspace),
    excludedDirectories: [stateDirectory],
    reader,
    limits: options.limits,
  });
  t.teardown(async () => {
    registry.close();
    await reader.close(0);
  });
  const begin = (sessionId: string, payload: unknown, guard: RegistrationGuard = always) =>
    registry.beginRegistration(sessionId, payload, attribution(), guard);
  const register = async (sessionId: string, payload: unknown, guard?: RegistrationGuard) => {
    const staged = begin(sessionId, payload, guard);
    await staged.capture();
    return staged.publish();
  };
  return {
    registry,
    clock,
    workspace,
    stateDirectory,
    setCatalog: (next) => {
      catalog = next;
    },
    begin,
    register,
    create: (sessionId, resource) => register(sessionId, { expected_revision: null, resource }),
  };
}

/** The wire code a call refuses with, or null when it succeeds. */
export async function refusalOf(fn: () => unknown): Promise<ErrorCode | null> {
  try {
    await fn();
    return null;
  } catch (error) {
    if (isWireError(error)) return error.code;
    throw error;
  }
}

/** The fixed message a call refuses with. */
export async function messageOf(fn: () => unknown): Promise<string | null> {
  try {
    await fn();
    return null;
  } catch (error) {
    if (isWireError(error)) return error.message;
    throw error;
  }
}
