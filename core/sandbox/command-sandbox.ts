/** The sandbox domain as the daemon uses it: probe once at startup, then run commands and report them. */
export { COMMAND_BOUNDS, COMMAND_LIMITS } from './command-limits.js';
export { commandResultText } from './command-result.js';
export {
  type CommandActivity,
  type CommandOutcome,
  type CommandRequest,
  CommandSandbox,
  type CommandSandboxOptions,
  type LimitProcess,
  SandboxStartFailed,
} from './command-runner.js';
export { SandboxClosed } from './cover-sources.js';
export { probeSandbox, type SandboxProbe, type SandboxUnavailableReason } from './probe.js';
export { type BoundsEnforcement, type CommandBounds, resourceControl } from './resource-control.js';
export { READABLE_HOME_PATHS, resolveSandboxView, type SandboxView } from './sandbox-view.js';
export { commandSeccompProgram } from './seccomp-filter.js';
export { ScanRefusal, type ScanRefusalReason } from './workspace-scan.js';
