/** The sandbox domain as the daemon uses it: probe once at startup, then run commands and report them. */
export { COMMAND_LIMITS } from './command-limits.js';
export { commandResultText } from './command-result.js';
export {
  type CommandOutcome,
  type CommandRequest,
  CommandSandbox,
  type CommandSandboxOptions,
  SandboxStartFailed,
} from './command-runner.js';
export { credentialHiddenPaths } from './credential-hidden-paths.js';
export { SandboxClosed } from './empty-file.js';
export { probeSandbox, type SandboxProbe } from './probe.js';
export { WorkspaceUnavailable } from './sandbox-layout.js';
