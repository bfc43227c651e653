import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { ToolsSection } from '../config/config-file.js';
import { DAEMON } from '../config/daemon.js';
import type { ToolEnvironment } from '../config/settings.js';
import { AgentToolbox } from '../core/agent/agent-toolbox.js';
import { configuredBuiltins } from '../core/agent/builtin-selection.js';
import { readHomeInstructions } from '../core/agent/home-instructions.js';
import { INSTRUCTIONS_LIMITS } from '../core/agent/instructions-limits.js';
import type { InstructionsState } from '../core/agent/instructions-state.js';
import type { Clock } from '../core/clock.js';
import { nativeAddon } from '../core/endpoint/native.js';
import { type McpServerEntry, McpServers } from '../core/mcp/mcp-servers.js';
import {
  type BoundsEnforcement,
  COMMAND_BOUNDS,
  type CommandActivity,
  CommandSandbox,
  commandSeccompProgram,
  probeSandbox,
  resolveSandboxView,
  resourceControl,
  type SandboxUnavailableReason,
} from '../core/sandbox/command-sandbox.js';
import { loadInstalledSkills, SKILL_LIMITS, skillIndex } from '../core/skills/installed-skills.js';
import type { SkillDiscovery } from '../core/skills/skill-discovery.js';
import { type SkillsStatus, skillsStatus } from '../core/skills/skills-status.js';
import { WebFetcher } from '../core/web/web-fetch.js';
import { WorkspaceTools } from '../core/workspace/workspace-tools.js';

export interface AgentPluginOptions {
  clock: Clock;
  home: string;
  tools: ToolsSection;
  mcpServers: Readonly<Record<string, McpServerEntry>>;
  /** What was found in `<home>/skills` at startup, and the skill names the configuration disables. */
  skills: { discovery: SkillDiscovery; disabled: readonly string[] };
  environment: ToolEnvironment;
  /** How long closing waits for a workspace tool still working. */
  drainMs: number;
}

/** `run_command` as `status` reports it: not asked for, asked for but without a usable sandbox, or offered. */
export type CommandToolState = 'off' | 'unavailable' | 'offered';

/**
 * The command sandbox as `status` reports it: why it is unavailable, or the bounds every command runs under
 * and what its commands are doing now.
 */
export interface SandboxStatus {
  run_command: CommandToolState;
  reason: SandboxUnavailableReason | null;
  /** Slots in use and commands waiting, now; null unless `run_command` is offered. */
  commands: CommandActivity | null;
  bounds: {
    concurrent_commands: number;
    memory_bytes: number;
    /** Null where nothing bounds them (rlimits only). */
    processes: number | null;
    file_size_bytes: number;
    core_dump_bytes: 0;
    enforced_by: BoundsEnforcement;
  } | null;
}

export interface AgentTools {
  readonly toolbox: AgentToolbox;
  /** Read once at startup: the home's `AGENTS.md` and the installed skills' index ('' when absent). */
  readonly instructions: { home: string; skillIndex: string };
  /** For `status`: the installed skills loaded and skipped, and what became of the home's `AGENTS.md`. */
  readonly skills: SkillsStatus;
  readonly homeInstructions: InstructionsState;
  readonly runCommand: CommandToolState;
  readonly sandbox: SandboxStatus;
  /** The configured MCP servers; null when none is. */
  readonly mcp: McpServers | null;
  /** True once the daemon closed while a workspace tool was still blocked on the filesystem. */
  readonly abandoned: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    agent: AgentTools;
  }
}

/**
 * The daemon's own agent, set up once at startup: what the configuration turns on, the sandbox `run_command`
 * needs (probed: without a working `bwrap` the tool is not offered and nothing runs unsandboxed), the
 * workspace tools' threads, the fetcher, the installed skills and the home's `AGENTS.md` (a skill or a
 * file that cannot be used is skipped with a warning naming it), and the MCP servers, started in the
 * background so that none delays the daemon (each in its configured `cwd` or a private empty directory,
 * never the home). Closing kills every command, stops every server and the threads.
 */
const agent: FastifyPluginAsync<AgentPluginOptions> = async (fastify, options) => {
  const { clock, home, tools, environment } = options;
  const log = fastify.log;
  const state = join(home, 'state');
  const { discovery, disabled } = options.skills;
  const installed = loadInstalledSkills(discovery.skills, disabled, [state], fastify.hiddenPlaces);
  for (const { skill, reason } of installed.skipped)
    log.warn({ skill, reason }, 'an installed skill was skipped');
  for (const { skill, characters } of installed.cut) {
    log.warn(
      { skill, characters },
      `an installed skill's description is over ${SKILL_LIMITS.description_chars} characters; it was cut there`,
    );
  }
  for (const { path, reason } of discovery.unused)
    log.warn({ entry: path, reason }, 'an entry of the skills folder is not used');
  const homeInstructions = readHomeInstructions(home);
  if (homeInstructions.state.state === 'refused') {
    log.warn({ reason: homeInstructions.state.reason }, 'the home AGENTS.md was not read');
  } else if (homeInstructions.state.state === 'cut') {
    log.warn(
      { bytes_used: homeInstructions.state.bytes },
      `the home AGENTS.md is over ${INSTRUCTIONS_LIMITS.file_bytes} bytes; only its beginning is used`,
    );
  }
  const wanted = configuredBuiltins(tools).filter(
    (name) => name !== 'load_skill' || installed.skills.length > 0,
  );
  let commands: CommandSandbox | null = null;
  let sandbox: Omit<SandboxStatus, 'commands'> = { run_command: 'off', reason: null, bounds: null };
  if (wanted.includes('run_command')) {
    const limitProcess = nativeAddon().limitProcess;
    const probe = await probeSandbox({
      searchPath: environment.searchPath,
      clock,
      arch: process.arch,
      limitProcess,
    });
    if (probe.available) {
      const view = await resolveSandboxView({
        daemonHome: home,
        socketPath: environment.socketPath,
        userHome: environment.userHome,
        runtimeDirectory: environment.runtimeDirectory,
        readablePaths: tools.run_command.readable_paths,
        searchPath: environment.searchPath,
      });
      for (const { path, reason } of view.skipped) {
        log.warn({ path, reason }, 'a readable path of run_command is not made readable');
      }
      const bounds = {
        memoryBytes: tools.run_command.memory_bytes ?? COMMAND_BOUNDS.memory_bytes_default,
        processes: tools.run_command.processes ?? COMMAND_BOUNDS.processes_default,
      };
      const control = await resourceControl(bounds, clock);
      commands = new CommandSandbox({
        bwrap: probe.bwrap,
        clock,
        view,
        seccomp: commandSeccompProgram(probe.architecture),
        control,
        bounds,
        limitProcess,
        coverDirectory: join(home, 'run', 'sandbox'),
      });
      await commands.sweep();
      sandbox = {
        run_command: 'offered',
        reason: null,
        bounds: {
          concurrent_commands: COMMAND_BOUNDS.concurrent,
          memory_bytes: bounds.memoryBytes,
          processes: control.enforcedBy === 'rlimit' ? null : bounds.processes,
          file_size_bytes: COMMAND_BOUNDS.file_size_bytes,
          core_dump_bytes: 0,
          enforced_by: control.enforcedBy,
        },
      };
    } else {
      sandbox = { run_command: 'unavailable', reason: probe.reason, bounds: null };
      log.warn(
        { reason: probe.reason },
        'run_command is enabled but the bubblewrap sandbox cannot run here; the tool is not offered',
      );
    }
  }
  const web = wanted.includes('web_fetch')
    ? new WebFetcher({ clock, allowPrivateAddresses: tools.web_fetch.allow_private_addresses })
    : null;
  const workspaceTools = new WorkspaceTools({ clock });
  const mcp =
    Object.keys(options.mcpServers).length > 0
      ? new McpServers({
          clock,
          servers: options.mcpServers,
          client: DAEMON,
          warn: (fields, message) => log.warn(fields, message),
        })
      : null;
  const toolbox = new AgentToolbox(
    wanted.filter((name) => name !== 'run_command' || commands !== null),
    {
      workspaceTools,
      commands,
      web,
      excludedDirectories: [home, state],
      skills: { installed: installed.skills, excludedDirectories: [state] },
      mcp,
      warn: (fields, message) => log.warn(fields, message),
    },
  );
  let abandoned = false;
  fastify.decorate('agent', {
    toolbox,
    instructions: { home: homeInstructions.text, skillIndex: skillIndex(installed.skills) },
    skills: skillsStatus(installed, discovery.unused),
    homeInstructions: homeInstructions.state,
    runCommand: sandbox.run_command,
    get sandbox() {
      return { ...sandbox, commands: commands?.activity() ?? null };
    },
    mcp,
    get abandoned() {
      return abandoned;
    },
  } satisfies AgentTools);
  mcp?.start();
  fastify.addHook('onClose', async () => {
    await Promise.all([commands?.close(), mcp?.close()]);
    if (await workspaceTools.close(options.drainMs)) return;
    abandoned = true;
    log.warn(
      { waited_ms: options.drainMs },
      'a workspace tool is still waiting on the filesystem; stopping without it',
    );
  });
};

export default fp(agent, { name: 'agent', fastify: '5.x' });
