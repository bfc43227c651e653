import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { runWorkspaceTool } from '../../../core/workspace/run-workspace-tool.js';
import {
  WORKSPACE_TOOL_ERRORS,
  type WorkspaceToolError,
} from '../../../core/workspace/workspace-tool-errors.js';
import type {
  WorkspaceToolName,
  WorkspaceToolOutcome,
  WorkspaceToolRequest,
} from '../../../core/workspace/workspace-tool-request.js';
import type { WorkspaceHooks } from '../../../core/workspace/workspace-walk.js';
import { pinnedWorkspace } from '../../helpers/confined.js';

export const SECRET = 'OUTSIDE-SECRET-7f3a';
export const INSIDE = 'inside content\n';

export interface CallOptions {
  workspace?: string;
  excludedDirectories?: readonly string[];
  hooks?: WorkspaceHooks;
}

export interface Sandbox {
  /** The workspace. */
  ws: string;
  /** A directory beside the workspace holding `secret.txt`. */
  outside: string;
  /** The daemon's state directory, beside the workspace, holding `history.txt`. */
  state: string;
  request(
    tool: WorkspaceToolName,
    args: Record<string, unknown>,
    options?: CallOptions,
  ): WorkspaceToolRequest;
  /** The call run on the test's own thread, with hooks when given. */
  run(tool: WorkspaceToolName, args: Record<string, unknown>, options?: CallOptions): WorkspaceToolOutcome;
  /** The parsed output of a call that must succeed. */
  output<T>(tool: WorkspaceToolName, args: Record<string, unknown>, options?: CallOptions): T;
}

/** A workspace, a directory outside it with a secret, and daemon state beside both, in the test's own directory. */
export function sandbox(t: Test): Sandbox {
  const base = t.testdir();
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  const state = join(base, 'state');
  for (const directory of [ws, outside, state]) mkdirSync(directory);
  writeFileSync(join(outside, 'secret.txt'), SECRET);
  writeFileSync(join(state, 'history.txt'), SECRET);
  const pinned = pinnedWorkspace(ws);
  const request = (
    tool: WorkspaceToolName,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): WorkspaceToolRequest => ({
    tool,
    workspace: options.workspace === undefined ? pinned : pinnedWorkspace(options.workspace),
    excludedDirectories: options.excludedDirectories ?? [state],
    arguments: args,
  });
  const run: Sandbox['run'] = (tool, args, options = {}) =>
    runWorkspaceTool(request(tool, args, options), options.hooks);
  return {
    ws,
    outside,
    state,
    request,
    run,
    output<T>(tool: WorkspaceToolName, args: Record<string, unknown>, options: CallOptions = {}): T {
      const outcome = run(tool, args, options);
      if (!outcome.ok) throw new Error(`${tool} was refused: ${outcome.code}`);
      return JSON.parse(outcome.output) as T;
    },
  };
}

/** Asserts a refusal with its code and its one fixed message. */
export function refused(
  t: Test,
  outcome: WorkspaceToolOutcome,
  code: WorkspaceToolError,
  name: string,
): void {
  t.same(outcome, { ok: false, code, message: WORKSPACE_TOOL_ERRORS[code] }, name);
}

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Every file name beneath `directory`, recursively, relative to it. */
export function treeOf(directory: string): string[] {
  return (readdirSync(directory, { recursive: true }) as string[]).sort();
}
