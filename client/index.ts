/** The magi-daemon client library: `import { MagiClient } from 'magi-daemon/client'`. */
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
export {
  LoginConnectionLost,
  type LoginResult,
  type LoginStep,
  login,
  OAuthLogin,
} from './login.js';
export { type ConnectOptions, MagiClient, PROFILE } from './magi-client.js';
export { type ResourceSpec, Session, type Turn, TurnConnectionLost } from './session.js';
export {
  connectSocket,
  type EventFrame,
  type ResponseFrame,
  WireCallError,
  WireClient,
} from './wire-client.js';
export type * from './wire-types.js';
