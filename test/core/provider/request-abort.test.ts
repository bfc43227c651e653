import t from 'tap';
import { RequestAbort } from '../../../core/provider/request-abort.js';

t.test("the caller's abort cancels the request, and the first reason is kept", async (t) => {
  const caller = new AbortController();
  const abort = new RequestAbort(caller.signal);
  t.equal(abort.cause, null);
  t.equal(abort.signal.aborted, false);
  caller.abort();
  t.equal(abort.signal.aborted, true);
  t.equal(abort.cause, 'cancelled');
  abort.abort('deadline');
  t.equal(abort.cause, 'cancelled', 'a later reason does not replace the first');
});

t.test("a reason of the daemon's own aborts the request; dispose stops following the caller", async (t) => {
  const caller = new AbortController();
  const abort = new RequestAbort(caller.signal);
  abort.abort('idle_timeout');
  t.equal(abort.signal.aborted, true);
  t.equal(abort.cause, 'idle_timeout');
  const other = new RequestAbort(caller.signal);
  other.dispose();
  caller.abort();
  t.equal(other.signal.aborted, false, 'a disposed abort no longer follows the caller');
  t.equal(other.cause, null);
});
