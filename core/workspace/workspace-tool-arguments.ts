import { Compile } from 'typebox/compile';
import { parseRelativePath } from '../capture/relative-path.js';
import type { ConfinedWorkspace, OwnFolder } from '../confinement/confined-workspace.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';
import { WORKSPACE_TOOL_LIMITS } from './workspace-tool-limits.js';
import { WORKSPACE_TOOL_PARAMETERS } from './workspace-tool-parameters.js';
import {
  WORKSPACE_TOOL_NAMES,
  type WorkspaceToolName,
  type WorkspaceToolRequest,
} from './workspace-tool-request.js';

/** A tool call whose arguments passed their schema and their byte and path rules; paths as components. */
export type WorkspaceToolCall =
  | { tool: 'read_file'; path: string[]; offset: number; length: number }
  | { tool: 'list_directory'; path: string[]; offset: number }
  | { tool: 'search_files'; path: string[]; pattern: string }
  | { tool: 'write_file'; path: string[]; content: string }
  | { tool: 'edit_file'; path: string[]; oldText: string; newText: string }
  /** Not a model's tool: the daemon reads a workspace's `AGENTS.md` with it (read-instructions.ts). */
  | { tool: 'read_instructions'; path: [string]; length: number; followLink: boolean };

/** Everything a tool needs, checked, in a form that crosses a thread boundary as it is. */
export interface WorkspaceToolJob {
  call: WorkspaceToolCall;
  workspace: ConfinedWorkspace | OwnFolder;
  excludedDirectories: string[];
}

const VALIDATORS = new Map(
  WORKSPACE_TOOL_NAMES.map((name) => [name, Compile(WORKSPACE_TOOL_PARAMETERS[name])] as const),
);

/** Checks a request against its tool's schema and rules; throws `invalid_arguments` or `invalid_path`. */
export function parseWorkspaceToolRequest(request: WorkspaceToolRequest): WorkspaceToolJob {
  const { workspace, excludedDirectories } = request;
  if (
    typeof workspace?.path !== 'string' ||
    !Array.isArray(excludedDirectories) ||
    !excludedDirectories.every((directory) => typeof directory === 'string')
  ) {
    throw new WorkspaceToolFailure('internal_error');
  }
  return {
    call: parseCall(request.tool, request.arguments),
    workspace,
    excludedDirectories: [...excludedDirectories],
  };
}

interface CheckedArguments {
  path?: string;
  offset?: number;
  length?: number;
  pattern?: string;
  content?: string;
  old_text?: string;
  new_text?: string;
}

function parseCall(tool: WorkspaceToolName, args: unknown): WorkspaceToolCall {
  const validator = VALIDATORS.get(tool);
  if (!validator?.Check(args)) throw new WorkspaceToolFailure('invalid_arguments');
  // The schema passed, so each member the tool has is there with its type (optional ones may be absent).
  const a = args as CheckedArguments;
  switch (tool) {
    case 'read_file':
      return {
        tool,
        path: filePath(a.path!),
        offset: a.offset ?? 0,
        length: a.length ?? WORKSPACE_TOOL_LIMITS.read_length_max,
      };
    case 'list_directory':
      return { tool, path: directoryPath(a.path!), offset: a.offset ?? 0 };
    case 'search_files':
      return { tool, path: directoryPath(a.path ?? '.'), pattern: a.pattern! };
    case 'write_file':
      return { tool, path: filePath(a.path!), content: writableText(a.content!) };
    case 'edit_file':
      return {
        tool,
        path: filePath(a.path!),
        oldText: writableText(a.old_text!),
        newText: writableText(a.new_text!),
      };
  }
}

function filePath(path: string): string[] {
  try {
    return parseRelativePath(path);
  } catch {
    throw new WorkspaceToolFailure('invalid_path');
  }
}

/** `"."` alone names the workspace root where a directory is expected. */
function directoryPath(path: string): string[] {
  return path === '.' ? [] : filePath(path);
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Text to be written must be well-formed (a lone surrogate has no UTF-8 form) and within the write bound. */
function writableText(text: string): string {
  if (LONE_SURROGATE.test(text) || Buffer.byteLength(text, 'utf8') > WORKSPACE_TOOL_LIMITS.write_bytes_max) {
    throw new WorkspaceToolFailure('invalid_arguments');
  }
  return text;
}
