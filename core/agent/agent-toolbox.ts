import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { ConfinedWorkspace } from '../confinement/confined-workspace.js';
import type { McpServers, McpTool } from '../mcp/mcp-servers.js';
import type { FunctionTool } from '../provider/chat-provider.js';
import type { BuiltinToolName } from '../resources/builtin-tools.js';
import { MCP_TOOL_PREFIX } from '../resources/names.js';
import type { CommandSandbox } from '../sandbox/command-sandbox.js';
import {
  COMMAND_LIMITS,
  commandResultText,
  ScanRefusal,
  type ScanRefusalReason,
} from '../sandbox/command-sandbox.js';
import type { WebFetcher } from '../web/web-fetch.js';
import { WORKSPACE_TOOL_PARAMETERS, type WorkspaceTools } from '../workspace/workspace-tools.js';
import {
  COMMAND_PARAMETERS,
  PLAN_PARAMETERS,
  SKILL_PARAMETERS,
  SUBAGENT_PARAMETERS,
  WEB_FETCH_PARAMETERS,
} from './builtin-parameters.js';
import type { DaemonCall, ToolOutcome } from './daemon-call.js';
import { INSTRUCTIONS_FILE, INSTRUCTIONS_LIMITS } from './instructions-limits.js';
import { WorkspaceInstructionsReport } from './instructions-report.js';
import { type InstructionsState, instructionsReadOf } from './instructions-state.js';
import { type LoadSkillArguments, loadSkill, type SkillShelf } from './load-skill.js';

/** The services behind the daemon's tools, created once per daemon. */
export interface AgentServices {
  workspaceTools: WorkspaceTools;
  /** The sandbox `run_command` runs in; null when the tool is not offered. */
  commands: CommandSandbox | null;
  /** The fetcher behind `web_fetch`; null when the tool is not offered. */
  web: WebFetcher | null;
  /** The daemon's own state, which no workspace tool reads or writes. */
  excludedDirectories: readonly string[];
  /** The skills installed in the home, read at startup; `load_skill` gives their text and files. */
  skills: SkillShelf;
  /** The configured MCP servers; null when none is. */
  mcp: McpServers | null;
  /** Logs a warning: a workspace `AGENTS.md` cut or refused, once each time its workspace's state changes. */
  warn: (fields: Record<string, unknown>, message: string) => void;
}

interface Definition {
  description: string;
  parameters: TSchema;
}

const DEFINITIONS: Readonly<Record<Exclude<BuiltinToolName, 'web_search'>, Definition>> = {
  read_file: {
    description:
      'Read a text file of the workspace (path relative to it). Returns at most 16384 bytes from offset, fewer when escaping them would make the result too large (truncated:true); read on from next_offset.',
    parameters: WORKSPACE_TOOL_PARAMETERS.read_file,
  },
  list_directory: {
    description:
      'List a directory of the workspace; "." is the workspace itself. Symbolic links are not followed. Gives a page of at most 500 entries from offset; list on from next_offset.',
    parameters: WORKSPACE_TOOL_PARAMETERS.list_directory,
  },
  search_files: {
    description:
      'Search the text files beneath a directory of the workspace (default ".") for a regular expression in RE2 syntax (no lookaround or backreferences, so that no pattern can take exponential time), matched against each line; a pattern that is not valid RE2 is searched as literal text and the result says literal:true.',
    parameters: WORKSPACE_TOOL_PARAMETERS.search_files,
  },
  write_file: {
    description:
      'Create or replace a text file of the workspace with content; missing directories are created.',
    parameters: WORKSPACE_TOOL_PARAMETERS.write_file,
  },
  edit_file: {
    description: 'Replace the one occurrence of old_text in a text file of the workspace with new_text.',
    parameters: WORKSPACE_TOOL_PARAMETERS.edit_file,
  },
  run_command: {
    description:
      'Run a command with /bin/sh -c in the workspace, inside a sandbox: no network, the rest of the filesystem read-only. Returns the exit code and the output (cut to 16384 bytes).',
    parameters: COMMAND_PARAMETERS,
  },
  web_fetch: {
    description: 'Fetch an http or https URL with GET and return its text (cut to 16384 bytes).',
    parameters: WEB_FETCH_PARAMETERS,
  },
  update_plan: {
    description:
      'Keep a short plan of this task: send the whole list of steps each time, each pending, in_progress or completed.',
    parameters: PLAN_PARAMETERS,
  },
  spawn_agent: {
    description:
      'Hand a self-contained task to a subagent with the workspace and command tools (not this one) and get its final answer.',
    parameters: SUBAGENT_PARAMETERS,
  },
  load_skill: {
    description:
      'Load an installed skill by the name the skill index gives: its instructions and the list of its files; with path, one of those files. Long texts come in windows: read on from next_offset.',
    parameters: SKILL_PARAMETERS,
  },
};

const VALIDATORS = new Map(
  Object.entries(DEFINITIONS).map(([name, definition]) => [name, Compile(definition.parameters)] as const),
);

const UNAVAILABLE: ToolOutcome = { ok: false, code: 'unavailable', message: 'the tool is not available' };
const COMMAND_FAILED: ToolOutcome = {
  ok: false,
  code: 'command_failed',
  message: 'the command could not be started',
};
/** Why a command's workspace could not be prepared (docs/sandbox.md); nothing ran. */
const COMMAND_REFUSALS: Readonly<Record<ScanRefusalReason, ToolOutcome>> = {
  workspace_unavailable: COMMAND_FAILED,
  workspace_not_allowed: {
    ok: false,
    code: 'workspace_not_allowed',
    message: "the workspace is the filesystem root, the daemon's home or inside it",
  },
  workspace_changed: {
    ok: false,
    code: 'workspace_changed',
    message: 'the workspace folder was moved, replaced or swapped for a link since its session was made',
  },
  workspace_too_large: {
    ok: false,
    code: 'workspace_too_large',
    message: 'the workspace has more folders or entries than a command sandbox checks',
  },
};

/**
 * The daemon's own tools as offered and run: the built-in tools decided at startup, the MCP servers' tools
 * ready at each turn's admission, their definitions for the provider, the check of a call's arguments, and
 * the run of every tool that is not the turn's own business (plans and subagents are run by the turn).
 */
/** The workspaces of the live sessions other than `sessionId`, which its commands must not see. */
export type OtherWorkspaces = (sessionId: string) => string[];

export class AgentToolbox {
  readonly offered: readonly BuiltinToolName[];
  /** The last read of each workspace's `AGENTS.md`, for `status`. */
  readonly workspaceInstructionsReport = new WorkspaceInstructionsReport();
  readonly #services: AgentServices;
  #otherWorkspaces: OtherWorkspaces = () => [];

  constructor(offered: readonly BuiltinToolName[], services: AgentServices) {
    this.offered = offered.filter((name) => name !== 'web_search');
    this.#services = services;
  }

  /** Where commands learn which workspaces belong to the other live sessions (known once turns run). */
  provideOtherWorkspaces(otherWorkspaces: OtherWorkspaces): void {
    this.#otherWorkspaces = otherWorkspaces;
  }

  /** The MCP tools ready now: what a turn admitted now may call for its whole life. */
  mcpTools(): readonly McpTool[] {
    return this.#services.mcp?.tools() ?? [];
  }

  /**
   * The built-ins a subagent may call: the turn's but `spawn_agent` (depth 1) and `update_plan` (the turn's
   * own). It gets the turn's MCP tools beside them.
   */
  forSubagent(builtins: readonly BuiltinToolName[]): readonly BuiltinToolName[] {
    return builtins.filter((name) => name !== 'spawn_agent' && name !== 'update_plan');
  }

  /** The provider's view of built-in tools `names` and of MCP tools `mcp`, in their order. */
  definitions(names: readonly BuiltinToolName[], mcp: readonly McpTool[] = []): FunctionTool[] {
    const builtins = names.flatMap((name) => {
      const definition = name === 'web_search' ? undefined : DEFINITIONS[name];
      return definition
        ? [
            {
              name,
              description: definition.description,
              parameters: definition.parameters as Record<string, unknown>,
            },
          ]
        : [];
    });
    return [
      ...builtins,
      ...mcp.map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.inputSchema,
      })),
    ];
  }

  /**
   * Whether `args` satisfy the tool's arguments: a built-in's schema exactly; for an MCP tool a JSON object,
   * which its server checks against its own schema.
   */
  accepts(name: string, args: unknown): boolean {
    if (name.startsWith(MCP_TOOL_PREFIX))
      return typeof args === 'object' && args !== null && !Array.isArray(args);
    return VALIDATORS.get(name)?.Check(args) === true;
  }

  /**
   * The workspace's `AGENTS.md` (read-instructions.ts on the workspace tools' threads: its first
   * `file_bytes`, a link to a file of the same workspace followed, the walk's refusals kept), or null when
   * there is none, it is empty, refused, or the turn ended first. Each read is remembered for `status`; a
   * cut or refused file is logged when that differs from its workspace's last read. The read is the
   * session's like its turn's calls.
   */
  async workspaceInstructions(
    workspace: ConfinedWorkspace,
    signal: AbortSignal,
    session: string,
  ): Promise<string | null> {
    const { workspaceTools, excludedDirectories } = this.#services;
    const outcome = await workspaceTools.readInstructions(
      { workspace, excludedDirectories, name: INSTRUCTIONS_FILE, length: INSTRUCTIONS_LIMITS.file_bytes },
      signal,
      session,
    );
    if (!outcome.ok && outcome.code === 'cancelled') return null;
    const read = instructionsReadOf(outcome);
    if (this.workspaceInstructionsReport.record(workspace.path, read.state))
      this.#warnOf(workspace.path, read.state);
    return read.text === '' ? null : read.text;
  }

  #warnOf(workspace: string, state: InstructionsState): void {
    if (state.state === 'cut') {
      this.#services.warn(
        { workspace, bytes_used: state.bytes },
        `a workspace AGENTS.md is over ${INSTRUCTIONS_LIMITS.file_bytes} bytes; only its beginning is used`,
      );
    } else if (state.state === 'refused') {
      this.#services.warn({ workspace, reason: state.reason }, 'a workspace AGENTS.md was not used');
    }
  }

  /**
   * Runs a workspace, command, web, skill or MCP call; never rejects. `session` is the turn's: the workspace
   * tools serve each session's calls one at a time, a subagent's with its turn's.
   */
  async run(
    call: DaemonCall,
    context: { workspace: ConfinedWorkspace; signal: AbortSignal; session: string },
  ): Promise<ToolOutcome> {
    const { workspaceTools, commands, web, excludedDirectories, skills, mcp } = this.#services;
    const args = call.arguments;
    if (call.kind === 'mcp') return mcp ? mcp.call(call.name, args, context.signal) : UNAVAILABLE;
    switch (call.name) {
      case 'read_file':
      case 'list_directory':
      case 'search_files':
      case 'write_file':
      case 'edit_file':
        return workspaceTools.run(
          { tool: call.name, workspace: context.workspace, excludedDirectories, arguments: args },
          context.signal,
          context.session,
        );
      case 'run_command': {
        if (!commands) return UNAVAILABLE;
        try {
          const outcome = await commands.run({
            command: args.command as string,
            workspace: context.workspace,
            session: context.session,
            otherWorkspaces: this.#otherWorkspaces(context.session),
            timeoutMs: (args.timeout_ms as number | undefined) ?? COMMAND_LIMITS.timeout_ms_default,
            signal: context.signal,
          });
          return { ok: true, output: commandResultText(outcome) };
        } catch (error) {
          // A workspace refused or gone, a sandbox closing or a NUL in the command: nothing ran.
          return error instanceof ScanRefusal ? COMMAND_REFUSALS[error.reason] : COMMAND_FAILED;
        }
      }
      case 'web_fetch':
        return web ? web.fetch(args.url as string, context.signal) : UNAVAILABLE;
      case 'load_skill':
        return loadSkill(skills, args as unknown as LoadSkillArguments, (request) =>
          workspaceTools.run(request, context.signal, context.session),
        );
      default:
        return UNAVAILABLE;
    }
  }
}
