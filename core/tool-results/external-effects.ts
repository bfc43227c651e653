/**
 * What a tool call may have done outside the daemon: nothing yet (`not_dispatched`), maybe something while
 * no outcome was reported (`uncertain`), or what its reported outcome says (`reported`). Application and
 * daemon calls alike.
 */
export type ExternalEffects = 'not_dispatched' | 'uncertain' | 'reported';
