import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon, listing } from './catalog.fixture.js';
import { codeOf } from './session.resources.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`catalog.list (${transport})`, async (t) => {
    t.test('is empty before the first refresh and never asks the provider', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      const client = await daemon.connect(transport);
      t.same(await client.call('catalog.list'), { models: [], truncated: false, refreshed_at: null });
      t.equal(provider.requests.length, 0);
    });

    t.test('reads the cache a refresh left, across a restart', async (t) => {
      const first = await catalogDaemon(t);
      first.provider.replyModels(listing(['model-a', 'model-b']));
      const client = await first.daemon.connect(transport);
      const refreshed = await client.call('catalog.refresh', {}, { operation: op() });
      const second = await catalogDaemon(t, { home: first.daemon.home });
      const later = await second.daemon.connect(transport);
      t.same(await later.call('catalog.list'), refreshed);
      t.equal(second.provider.requests.length, 0);
    });

    t.test('a cache file is projected again when read; a malformed one is empty', async (t) => {
      const home = t.testdir({
        'models.json': JSON.stringify({
          models: [{ id: 'ok', owned_by: 'lab', extra: 'dropped' }, { id: 'not ok' }],
          truncated: false,
          refreshed_at: 5,
          note: 'dropped',
        }),
      });
      const { daemon } = await catalogDaemon(t, { home });
      const client = await daemon.connect(transport);
      t.same(await client.call('catalog.list'), {
        models: [{ id: 'ok', owned_by: 'lab' }],
        truncated: false,
        refreshed_at: 5,
      });
      const broken = t.testdir({ 'models.json': '{"models": 3}' });
      const other = await (await catalogDaemon(t, { home: broken })).daemon.connect(transport);
      t.same(await other.call('catalog.list'), { models: [], truncated: false, refreshed_at: null });
      writeFileSync(join(home, 'models.json'), 'changed under the daemon');
      t.same(
        (await client.call('catalog.list')).models,
        [{ id: 'ok', owned_by: 'lab' }],
        'the daemon serves its own cache from memory',
      );
    });

    t.test('it is a read with an empty payload', async (t) => {
      const { daemon } = await catalogDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(codeOf(await client.request('catalog.list', {}, { operation: op() })), 'invalid_request');
      t.equal(codeOf(await client.request('catalog.list', { limit: 1 })), 'invalid_payload');
    });
  });
}
