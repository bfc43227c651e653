import t from 'tap';
import type { WebFetchOutcome } from '../../../core/web/web-fetch.js';
import { failed, fetcher, page, serve } from './web-fixture.js';

/** A promise and the function that settles it. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Whether `pending` has settled once pending I/O callbacks have run. */
async function settled(pending: Promise<unknown>): Promise<boolean> {
  let done = false;
  void pending.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

t.test('a server that never answers times out at the deadline and its connection is closed', async (t) => {
  const arrived = gate();
  const served = await serve(t, () => arrived.open());
  const { web, clock } = fetcher({ timeoutMs: 1_000 });
  const pending = web.fetch(served.url('/'), new AbortController().signal);
  await arrived.promise;
  clock.advance(999);
  t.equal(await settled(pending), false, 'not before the deadline');
  clock.advance(1);
  failed(t, await pending, 'timed_out');
  await served.allClosed();
  t.equal(served.connections, 1);
});

t.test('the default deadline is twenty seconds', async (t) => {
  const arrived = gate();
  const served = await serve(t, () => arrived.open());
  const { web, clock } = fetcher();
  const pending = web.fetch(served.url('/'), new AbortController().signal);
  await arrived.promise;
  clock.advance(19_999);
  t.equal(await settled(pending), false);
  clock.advance(1);
  failed(t, await pending, 'timed_out');
});

t.test('a body that never ends times out too', async (t) => {
  const started = gate();
  const served = await serve(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('the start', () => started.open());
  });
  const { web, clock } = fetcher({ timeoutMs: 1_000 });
  const pending = web.fetch(served.url('/'), new AbortController().signal);
  await started.promise;
  clock.advance(1_000);
  failed(t, await pending, 'timed_out');
  await served.allClosed();
  t.equal(served.connections, 1);
});

t.test('one deadline covers the whole fetch, redirects included', async (t) => {
  const first = gate();
  const release = gate();
  const second = gate();
  const served = await serve(t, (request, response) => {
    if (request.url === '/first') {
      first.open();
      void release.promise.then(() => {
        response.writeHead(302, { location: '/second' });
        response.end();
      });
      return;
    }
    second.open();
  });
  const { web, clock } = fetcher({ timeoutMs: 1_000 });
  const pending = web.fetch(served.url('/first'), new AbortController().signal);
  await first.promise;
  clock.advance(600);
  release.open();
  await second.promise;
  clock.advance(399);
  t.equal(await settled(pending), false);
  clock.advance(1);
  failed(t, await pending, 'timed_out', 'the redirect did not restart the deadline');
});

t.test('aborting cancels at once and closes the connection', async (t) => {
  const arrived = gate();
  const served = await serve(t, () => arrived.open());
  const { web } = fetcher();
  const abort = new AbortController();
  const pending = web.fetch(served.url('/'), abort.signal);
  await arrived.promise;
  abort.abort();
  failed(t, await pending, 'cancelled');
  await served.allClosed();
  t.equal(served.connections, 1);
});

t.test('aborting cancels during the name lookup, and the deadline reaches it too', async (t) => {
  const asked = gate<string>();
  const answer = gate<Array<{ address: string; family: 4 }>>();
  const served = await serve(t, (_request, response) => response.end());
  const { web, clock } = fetcher({
    timeoutMs: 1_000,
    lookup: (host) => {
      asked.open(host);
      return answer.promise;
    },
  });
  const abort = new AbortController();
  const cancelled = web.fetch(`http://a.test:${served.port}/`, abort.signal);
  t.equal(await asked.promise, 'a.test');
  abort.abort();
  failed(t, await cancelled, 'cancelled', 'the lookup had not answered');
  const timed = web.fetch(`http://a.test:${served.port}/`, new AbortController().signal);
  clock.advance(1_000);
  failed(t, await timed, 'timed_out');
  answer.open([{ address: '127.0.0.1', family: 4 }]);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(served.connections, 0, 'an answer after the end connects nowhere');
});

t.test('a signal aborted before the fetch cancels it without a lookup', async (t) => {
  const { web } = fetcher({
    lookup: async () => {
      t.fail('nothing is looked up');
      return [];
    },
  });
  failed(t, await web.fetch('http://a.test/', AbortSignal.abort()), 'cancelled');
});

t.test('a finished fetch leaves no deadline behind and ignores a later abort', async (t) => {
  const served = await serve(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('quick');
  });
  const { web, clock } = fetcher({ timeoutMs: 1_000 });
  const abort = new AbortController();
  const outcome: WebFetchOutcome = await web.fetch(served.url('/'), abort.signal);
  abort.abort();
  clock.advance(5_000);
  t.equal(page(t, outcome).content, 'quick');
});
