import type { KeptCall } from './executor-store.js';
import {
  type ExecutorOptions,
  failureOutcome,
  HANDLER_FAILED,
  type InterruptedDecision,
  interruptedOutcome,
  NO_HANDLER,
  type ToolCall,
  ToolFailure,
  type ToolHandler,
} from './executor-types.js';
import type { ToolOutcome } from './wire-types.js';

/**
 * Runs a call's handler once and turns what it returned or threw into the outcome the daemon receives; a
 * handler's own error text reaches the model only through a ToolFailure. `running` holds the call's abort
 * controller while it runs, for a cancellation.
 */
export async function runHandler(
  handlers: Readonly<Record<string, ToolHandler>>,
  kept: KeptCall,
  running: Map<string, AbortController>,
): Promise<ToolOutcome> {
  const handler = handlers[kept.name];
  if (handler === undefined) return { status: 'error', code: 'execution_failed', message: NO_HANDLER };
  const controller = new AbortController();
  running.set(kept.call_id, controller);
  const call: ToolCall = {
    sessionId: kept.session_id,
    turnId: kept.turn_id,
    callId: kept.call_id,
    name: kept.name,
    timeoutMs: kept.timeout_ms,
    signal: controller.signal,
  };
  try {
    return { status: 'success', value: await handler(kept.arguments, call) };
  } catch (error) {
    if (error instanceof ToolFailure) return failureOutcome(error);
    return { status: 'error', code: 'execution_failed', message: HANDLER_FAILED };
  } finally {
    running.delete(kept.call_id);
  }
}

/**
 * The outcome of a call whose handler ran when the application stopped: what `onInterrupted` decides (by
 * default a fixed error, never run again); `runAgain` runs its handler again when it says so.
 */
export async function decideInterrupted(
  onInterrupted: ExecutorOptions['onInterrupted'],
  kept: KeptCall,
  runAgain: () => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  if (onInterrupted === undefined) return interruptedOutcome();
  let decision: InterruptedDecision;
  try {
    decision = await onInterrupted({
      sessionId: kept.session_id,
      turnId: kept.turn_id,
      callId: kept.call_id,
      name: kept.name,
      arguments: kept.arguments,
    });
  } catch {
    return { status: 'error', code: 'execution_failed', message: HANDLER_FAILED };
  }
  if ('run' in decision) return runAgain();
  if ('value' in decision) return { status: 'success', value: decision.value };
  return failureOutcome(decision.failure);
}
