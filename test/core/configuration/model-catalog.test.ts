import t from 'tap';
import {
  type CatalogSnapshot,
  catalogShares,
  EMPTY_CATALOG,
  ModelCatalog,
  projectModelListing,
} from '../../../core/configuration/model-catalog.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
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

t.test("providers share the catalog's 100 models; a named provider's ids carry its name", async (t) => {
  t.same(catalogShares(1), [100]);
  t.same(catalogShares(3), [34, 33, 33]);
  const catalog = new ModelCatalog(EMPTY_CATALOG, { write: async () => {} }, fakeClock());
  const many = (prefix: string) => ({
    data: Array.from({ length: 60 }, (_, i) => ({ id: `${prefix}${i}` })),
  });
  const snapshot = await catalog.replaceAll([
    { name: null, listing: many('s') },
    { name: 'openai', listing: many('o') },
  ]);
  t.equal(snapshot.models.length, 100);
  t.equal(snapshot.truncated, true);
  t.same(snapshot.models[0], { id: 's0', owned_by: null });
  t.same(snapshot.models[50], { id: 'openai/o0', owned_by: null, provider: 'openai' });
  t.ok(catalog.has('openai/o49'));
  t.notOk(catalog.has('o0'), 'a named provider is listed under its name only');
  const long = projectModelListing({ data: [{ id: 'x'.repeat(120) }] }, 'provider-name');
  t.same(long.models, [], 'a prefixed id past 128 characters is skipped');
});

t.test('a failed provider keeps what the catalog had of it; all failing changes nothing', async (t) => {
  const catalog = new ModelCatalog(EMPTY_CATALOG, { write: async () => {} }, fakeClock());
  await catalog.replaceAll([
    { name: null, listing: { data: [{ id: 'a' }] } },
    { name: 'n', listing: { data: [{ id: 'b' }] } },
  ]);
  const failure = new ProviderError('unreachable');
  const partial = await catalog.replaceAll([
    { name: null, failure },
    { name: 'n', listing: { data: [{ id: 'c' }] } },
  ]);
  t.same(
    partial.models.map((model) => model.id),
    ['a', 'n/c'],
  );
  await t.rejects(
    catalog.replaceAll([
      { name: null, failure },
      { name: 'n', failure: new ProviderError('http_status', 500) },
    ]),
    failure,
  );
  t.same(
    catalog.snapshot.models.map((model) => model.id),
    ['a', 'n/c'],
  );
});
