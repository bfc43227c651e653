import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { ToolsSection } from '../config/config-file.js';
import { AgentToolbox } from '../core/agent/agent-toolbox.js';
import { configuredBuiltins } from '../core/agent/builtin-selection.js';
import type { Clock } from '../core/clock.js';
import { CommandSandbox, credentialHiddenPaths, probeSandbox } from '../core/sandbox/command-sandbox.js';
import { WebFetcher } from '../core/web/web-fetch.js';
import { WorkspaceTools } from '../core/workspace/workspace-tools.js';

/** Where `run_command` finds `bwrap`, and the user whose credential folders the sandbox hides. */
export interface ToolEnvironment {
  /** A PATH string. */
  searchPath: string;
  userHome: string;
}

export interface AgentPluginOptions {
  clock: Clock;
  home: string;
  tools: ToolsSection;
  environment: ToolEnvironment;
  /** How long closing waits for a workspace tool still working. */
  drainMs: number;
}

/** `run_command` as `status` reports it: not asked for, asked for but without a usable sandbox, or offered. */
export type CommandToolState = 'off' | 'unavailable' | 'offered';

export interface AgentTools {
  readonly toolbox: AgentToolbox;
  readonly runCommand: CommandToolState;
  /** True once the daemon closed while a workspace tool was still blocked on the filesystem. */
  readonly abandoned: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    agent: AgentTools;
  }
}

/**
 * The daemon's own tools: what the configuration turns on, the sandbox `run_command` needs (probed once at
 * startup: without a working `bwrap` the tool is not offered and nothing runs unsandboxed), the workspace
 * tools' threads and the fetcher. Closing kills every command and stops the threads.
 */
const agent: FastifyPluginAsync<AgentPluginOptions> = async (fastify, options) => {
  const { clock, home, tools, environment } = options;
  const wanted = configuredBuiltins(tools);
  let commands: CommandSandbox | null = null;
  let runCommand: CommandToolState = 'off';
  if (wanted.includes('run_command')) {
    const probe = await probeSandbox({ searchPath: environment.searchPath, clock });
    if (probe.available) {
      commands = new CommandSandbox({
        bwrap: probe.bwrap,
        clock,
        hiddenPaths: [home, ...credentialHiddenPaths(environment.userHome)],
      });
      runCommand = 'offered';
    } else {
      runCommand = 'unavailable';
      fastify.log.warn(
        { reason: probe.reason },
        'run_command is enabled but the bubblewrap sandbox cannot run here; the tool is not offered',
      );
    }
  }
  const web = wanted.includes('web_fetch')
    ? new WebFetcher({ clock, allowPrivateAddresses: tools.web_fetch.allow_private_addresses })
    : null;
  const workspaceTools = new WorkspaceTools({ clock });
  const toolbox = new AgentToolbox(
    wanted.filter((name) => name !== 'run_command' || commands !== null),
    { workspaceTools, commands, web, excludedDirectories: [home, join(home, 'state')] },
  );
  let abandoned = false;
  fastify.decorate('agent', {
    toolbox,
    runCommand,
    get abandoned() {
      return abandoned;
    },
  } satisfies AgentTools);
  fastify.addHook('onClose', async () => {
    await commands?.close();
    if (await workspaceTools.close(options.drainMs)) return;
    abandoned = true;
    fastify.log.warn(
      { waited_ms: options.drainMs },
      'a workspace tool is still waiting on the filesystem; stopping without it',
    );
  });
};

export default fp(agent, { name: 'agent', fastify: '5.x' });
