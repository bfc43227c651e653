import t from 'tap';
import {
  type CatalogSnapshot,
  EMPTY_CATALOG,
  ModelCatalog,
  projectModelListing,
} from '../../../core/configuration/model-catalog.js';
import { fakeClock } from '../../helpers/fake-clock.js';

t.test('a listing of another shape is malformed', async (t) => {
  for (const listing of [null, 'text', [], {}, { data: {} }, { models: [] }]) {
    t.throws(() => projectModelListing(listing), { name: 'ProviderError', kind: 'malformed_listing' });
  }
  t.same(projectModelListing({ data: [] }), { models: [], truncated: false });
});

t.test('duplicates and skipped entries do not count toward the bound', async (t) => {
  const data = [...Array.from({ length: 100 }, (_, i) => ({ id: `m${i}` })), { id: 'm0' }, { id: 'bad id' }];
  t.same(projectModelListing({ data }).truncated, false, 'exactly 100 distinct valid ids fit');
  t.same(projectModelListing({ data: [...data, { id: 'one-more' }] }).truncated, true);
});

t.test('a refresh is written to the cache before it is served; a failed write changes nothing', async (t) => {
  const clock = fakeClock();
  const written: CatalogSnapshot[] = [];
  let fail = false;
  const catalog = new ModelCatalog(
    EMPTY_CATALOG,
    {
      write: async (snapshot) => {
        if (fail) throw new Error('disk full');
        written.push(snapshot);
      },
    },
    clock,
  );
  clock.advance(1_000);
  const snapshot = await catalog.replace({ data: [{ id: 'a', owned_by: 'o' }] });
  t.same(snapshot, { models: [{ id: 'a', owned_by: 'o' }], truncated: false, refreshed_at: clock.wallNow() });
  t.same(written, [snapshot]);
  t.ok(catalog.has('a'));
  fail = true;
  await t.rejects(catalog.replace({ data: [{ id: 'b' }] }), { message: 'disk full' });
  t.same(catalog.snapshot, snapshot);
  t.notOk(catalog.has('b'));
});
