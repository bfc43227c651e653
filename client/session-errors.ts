/** The connection closed before the turn's terminal reached it; the turn itself goes on. */
export class TurnConnectionLost extends Error {
  override readonly name = 'TurnConnectionLost';
  constructor() {
    super('the connection closed before the turn ended; claim the session again to follow it');
  }
}

/**
 * This session object no longer controls the session (it released or closed it, or another connection
 * claimed it), so the turn's later events, its terminal included, go elsewhere or to no one.
 */
export class SessionControlEnded extends Error {
  override readonly name = 'SessionControlEnded';
  readonly reason: 'released' | 'closed' | 'takeover';
  constructor(reason: 'released' | 'closed' | 'takeover') {
    super(`control of the session ended (${reason}); claim the session again to follow its turn`);
    this.reason = reason;
  }
}
