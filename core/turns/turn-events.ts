/** A live event of a turn, addressed to whoever controls its session when it is sent. */
export interface TurnEvent {
  event: 'turn.started' | 'turn.assistant_delta' | 'turn.activity' | 'turn.terminal';
  sessionId: string;
  /** The `turn.start` operation id. */
  operationId: string;
  sequence: number;
  /** The payload as a receiver sees it: profile connections also see the manifest where one belongs. */
  payload: (selected: boolean) => Record<string, unknown>;
}

/** A callback event for an executor's attached connection, outside any session sequence. */
export interface CallbackEvent {
  event: 'turn.application_tool_call' | 'turn.application_tool_cancel';
  sessionId: string;
  payload: Record<string, unknown>;
}

/** Where a turn's frames go; the daemon's wire behind it. */
export interface TurnSink {
  /**
   * Sends to the session's current controller, if any. A lossy event (activity) is dropped when that
   * connection is congested or there is no controller: then false. Every other event is queued whatever
   * the congestion, and simply not sent while nobody controls the session.
   */
  toController(event: TurnEvent, lossy: boolean): boolean;
  /** Whether the session's current controller negotiated `capability`; false while nobody controls it. */
  controllerNegotiated(sessionId: string, capability: string): boolean;
  /** Sends to the connection `connectionId` (an executor's attachment); false when it is gone. */
  toExecutor(connectionId: string, event: CallbackEvent): boolean;
}
