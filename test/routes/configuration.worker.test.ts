import t from 'tap';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon, listing } from './catalog.fixture.js';

/** Queues a `GET /models` answer held before its first byte. */
function heldListing(provider: Awaited<ReturnType<typeof catalogDaemon>>['provider'], ids: string[]) {
  const hold = provider.hold();
  provider.scriptModels({
    status: 200,
    headers: { 'content-type': 'application/json' },
    steps: [hold, { kind: 'write', bytes: Buffer.from(JSON.stringify(listing(ids))) }],
  });
  return hold;
}

/** The ids of the responses `received` holds, in the order they were written. */
function answerOrder(received: readonly string[]): string[] {
  return received
    .map((line) => JSON.parse(line) as { type: string; id: string })
    .filter((frame) => frame.type === 'response')
    .map((frame) => frame.id);
}

for (const transport of TRANSPORTS) {
  t.test(`configuration worker (${transport})`, async (t) => {
    t.test('configuration methods run one at a time, in order, each until its answer is out', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      const hold = heldListing(provider, ['model-a']);
      const client = await daemon.connect(transport);
      const before = client.received.length;
      const refresh = client.send('catalog.refresh', {}, { operation: op() });
      await hold.reached;
      const list = client.send('catalog.list');
      const update = client.send(
        'settings.update',
        { workspace: null, changes: { model: 'model-a' } },
        { operation: op() },
      );
      const get = client.send('settings.get', { workspace: null });
      const logout = client.send('auth.logout', {}, { operation: op() });
      t.match(await client.call('status'), {
        ready: false,
        provider: { kind: 'openai_chat_completions', model: null, configured: false },
        auth: { ready: false, method: null },
        sessions: 0,
        active_turns: 0,
      });
      t.same(await client.call('auth.status'), { ready: false, method: null }, 'reads of memory never wait');
      t.equal(client.received.length - before, 2, 'nothing else answered while the refresh waits');
      hold.release();
      const refreshed = await client.response(refresh);
      t.match((await client.response(list)).result, refreshed.result, 'the list sees the refresh');
      t.match(
        (await client.response(update)).result,
        { global: { model: 'model-a' } },
        'the update sees the fresh catalog',
      );
      t.match((await client.response(get)).result, { global: { model: 'model-a' } });
      t.equal((await client.response(logout)).ok, true);
      t.same(answerOrder(client.received.slice(before + 2)), [refresh, list, update, get, logout]);
    });

    t.test('a drain answers a refresh still waiting on the provider', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      heldListing(provider, ['model-a']);
      const client = await daemon.connect(transport);
      const refresh = client.send('catalog.refresh', {}, { operation: op() });
      await provider.nextRequest();
      const closing = daemon.app.close();
      t.same((await client.response(refresh)).error, {
        code: 'provider_error',
        message: 'the provider request was cancelled',
      });
      await closing;
    });
  });
}
