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
export {
  ApplicationExecutor,
  type CallState,
  ExecutorLostError,
  type ExecutorOptions,
  type ToolCall,
  ToolFailure,
  type ToolHandler,
} from './executor.js';
export { LaunchError, type LaunchedDaemon, type LaunchOptions, launchDaemon } from './launch.js';
export { type ConnectOptions, MagiClient, PROFILE } from './magi-client.js';
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
export {
  connectSocket,
  type EventFrame,
  type ResponseFrame,
  WireCallError,
  WireClient,
} from './wire-client.js';
export type * from './wire-types.js';
