import { WireError } from '../errors.js';

/**
 * Every refusal of an executor method, with fixed text. A wrong secret, a connection that neither holds
 * the executor nor presents one of its secrets, and an unknown, expired or released executor share one
 * refusal so that none reveals whether the executor exists.
 */
export const executorRefusals = {
  invalidProof: () => new WireError('unauthorized', 'the executor proof is not valid'),
  notHeldByConnection: () =>
    new WireError('stale_connection', 'the connection does not hold this executor generation'),
  notConfirmable: () =>
    new WireError('stale_connection', 'the executor can no longer be confirmed from this connection'),
  noPendingRotation: () => new WireError('stale_connection', 'no rotation is pending for this executor'),
  connectionHasExecutor: () =>
    new WireError('conflict', 'another executor is already attached to this connection'),
  tooManyExecutors: () => new WireError('limit_exceeded', 'the daemon holds the maximum number of executors'),
} as const;
