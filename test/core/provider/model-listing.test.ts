import t, { type Test } from 'tap';
import { chatRequestHeaders } from '../../../core/provider/chat-request.js';
import { ModelListing, type ModelListingOptions } from '../../../core/provider/model-listing.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { ScriptedProvider } from '../../helpers/scripted-provider.js';

const SECRET = 'sk-listing-secret-11f0';

async function listingFixture(t: Test, options: Partial<ModelListingOptions> = {}) {
  const server = await ScriptedProvider.start(t);
  const clock = fakeClock();
  const listing = new ModelListing({
    baseUrl: `${server.baseUrl}/`,
    apiKey: () => SECRET,
    headers: (key) => chatRequestHeaders(key, { 'X-Title': 'magi' }),
    clock,
    deadlineMs: 1_000,
    responseBytes: 64,
    ...options,
  });
  return { server, clock, listing };
}

function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

t.test('GET {base_url}/models with the configured headers and the key; the JSON comes back', async (t) => {
  const { server, listing } = await listingFixture(t);
  server.replyModels({ data: [{ id: 'm' }] });
  t.same(await listing.list(new AbortController().signal), { data: [{ id: 'm' }] });
  const sent = server.requests[0]!;
  t.equal(sent.method, 'GET');
  t.equal(sent.path, '/v1/models', 'one slash between');
  t.match(sent.headers, { 'x-title': 'magi', authorization: `Bearer ${SECRET}`, accept: 'application/json' });
  t.notOk('content-type' in sent.headers);
});

t.test('failures carry a kind and a status, never the provider text', async (t) => {
  const { server, listing } = await listingFixture(t);
  const signal = new AbortController().signal;
  server.replyModels({ error: SECRET }, 500);
  const status = await failure(listing.list(signal));
  t.match(status, { name: 'ProviderError', kind: 'http_status', status: 500 });
  t.notMatch(String((status as Error).stack), SECRET);
  server.scriptModels({ status: 302, headers: { location: 'http://127.0.0.1:9/' }, steps: [] });
  t.match(
    await failure(listing.list(signal)),
    { kind: 'http_status', status: 302 },
    'redirects are not followed',
  );
  server.replyModels('x'.repeat(65));
  t.match(await failure(listing.list(signal)), { kind: 'too_large' });
  server.replyModels(`{"data":`);
  t.match(await failure(listing.list(signal)), { kind: 'malformed_listing' });
  server.scriptModels({
    status: 200,
    headers: {},
    steps: [{ kind: 'write', bytes: Buffer.from('"\xff"', 'latin1') }],
  });
  t.match(await failure(listing.list(signal)), { kind: 'malformed_listing' });
});

t.test('the deadline and the caller abandon a listing that does not come', async (t) => {
  const { server, clock, listing } = await listingFixture(t);
  const hold = server.hold();
  server.scriptModels({ status: 200, headers: {}, steps: [hold] });
  const late = failure(listing.list(new AbortController().signal));
  await hold.reached;
  clock.advance(1_000);
  t.match(await late, { kind: 'deadline' });

  const second = server.hold();
  server.scriptModels({ status: 200, headers: {}, steps: [second] });
  const controller = new AbortController();
  const cancelled = failure(listing.list(controller.signal));
  await second.reached;
  controller.abort();
  t.match(await cancelled, { kind: 'cancelled' });
  const already = new AbortController();
  already.abort();
  t.match(await failure(listing.list(already.signal)), { kind: 'cancelled' });
});

t.test('an unreachable provider', async (t) => {
  const clock = fakeClock();
  const listing = new ModelListing({
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: () => null,
    headers: (key) => chatRequestHeaders(key, {}),
    clock,
    deadlineMs: 1_000,
    responseBytes: 64,
  });
  t.match(await failure(listing.list(new AbortController().signal)), { kind: 'unreachable' });
});
