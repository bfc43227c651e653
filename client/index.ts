/** The magi-daemon client library: `import { MagiClient } from 'magi-daemon/client'`. */
export { type Static, Type } from 'typebox';
export {
  type ContractProperty,
  type ContractSchema,
  type DefinedTool,
  defineTool,
  ToolContractError,
  type ToolDefinitionOptions,
  type TypedToolHandler,
  toolHandlers,
} from './define-tool.js';
export { ApplicationExecutor } from './executor.js';
export {
  type ExecutorRecord,
  type ExecutorStore,
  ExecutorStoreError,
  fileStore,
  type KeptCall,
  type KeptTurn,
} from './executor-store.js';
export {
  type CallState,
  type ExecutorEvents,
  ExecutorLostError,
  type ExecutorOptions,
  type InterruptedCall,
  type InterruptedDecision,
  type SettledState,
  type ToolCall,
  ToolFailure,
  type ToolHandler,
} from './executor-types.js';
export { LaunchError, type LaunchedDaemon, type LaunchOptions, launchDaemon } from './launch.js';
export {
  LoginConnectionLost,
  type LoginResult,
  type LoginStep,
  login,
  OAuthLogin,
} from './login.js';
export {
  type ClientEvents,
  type ClientExecutorOptions,
  type ConnectOptions,
  MagiClient,
  PROFILE,
  type ResumedExecutor,
} from './magi-client.js';
export { NoDaemonError } from './no-daemon-error.js';
export {
  type ResourceKind,
  type ResourceSpec,
  type RunOptions,
  Session,
  SessionControlEnded,
  type Turn,
  TurnConnectionLost,
  type TurnOptions,
  type TurnRun,
} from './session.js';
export type { TurnReport } from './turn-history.js';
export {
  connectSocket,
  type EventFrame,
  type ResponseFrame,
  WireCallError,
  WireClient,
} from './wire-client.js';
export type * from './wire-types.js';
