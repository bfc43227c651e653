import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { WIRE_LIMITS } from '../../core/limits.js';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon, listing } from './catalog.fixture.js';
import { codeOf } from './session.resources.fixture.js';

const SECRET = 'sk-refresh-secret-55c2';

for (const transport of TRANSPORTS) {
  t.test(`catalog.refresh (${transport})`, async (t) => {
    t.test('asks GET {base_url}/models with the key and caches the allowlisted projection', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      provider.replyModels({
        object: 'list',
        data: [
          { id: 'model-a', object: 'model', created: 1, owned_by: 'lab', secret_note: SECRET },
          { id: 'model-b', object: 'model', owned_by: 'x'.repeat(65) },
          { id: 'model-a', owned_by: 'again' },
          { id: 'has space' },
          { id: 'caf\u00e9' },
          { id: 'k'.repeat(129) },
          { id: 42 },
          'not an object',
          null,
          { id: 'k'.repeat(128), owned_by: 7 },
        ],
      });
      const client = await daemon.connect(transport);
      await client.call('auth.login', { method: 'api_key', api_key: SECRET }, { operation: op() });
      const operation = op();
      const result = await client.call('catalog.refresh', {}, { operation });
      t.same(result, {
        models: [
          { id: 'model-a', owned_by: 'lab' },
          { id: 'model-b', owned_by: null },
          { id: 'k'.repeat(128), owned_by: null },
        ],
        truncated: false,
        refreshed_at: daemon.clock.wallNow(),
      });
      const request = provider.requests[0]!;
      t.equal(request.method, 'GET');
      t.equal(request.path, '/v1/models');
      t.equal(request.headers.authorization, `Bearer ${SECRET}`);
      t.equal(request.headers.accept, 'application/json');
      const cache = join(daemon.home, 'models.json');
      t.equal(statSync(cache).mode & 0o777, 0o600);
      t.same(JSON.parse(readFileSync(cache, 'utf8')), result, 'the cache holds exactly the projection');
      t.same(await client.call('catalog.list'), result);
      t.match(await client.call('operation.lookup', { operation_id: operation }), {
        method: 'catalog.refresh',
        status: 'completed',
      });
      t.notMatch(client.received.join('\n'), SECRET);
    });

    t.test('keeps at most 100 models, says it cut, and fits the payload limit', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      const ids = Array.from({ length: 150 }, (_, i) => `${String(i).padStart(3, '0')}${'m'.repeat(125)}`);
      provider.replyModels(listing(ids, { owned_by: 'o'.repeat(64) }));
      const client = await daemon.connect(transport);
      const answer = await client.request('catalog.refresh', {}, { operation: op() });
      const result = answer.result as { models: Array<{ id: string }>; truncated: boolean };
      t.equal(result.models.length, 100);
      t.equal(result.models[99]!.id, ids[99]);
      t.equal(result.truncated, true);
      t.ok(Buffer.byteLength(JSON.stringify(result)) <= WIRE_LIMITS.payload_bytes);
    });

    t.test('a provider failure is provider_error with fixed text and keeps the cache', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      provider.replyModels(listing(['kept']));
      provider.replyModels({ error: { message: `bad key ${SECRET}` } }, 401);
      provider.replyModels(`{"data": [${SECRET}`);
      provider.replyModels({ models: [{ id: 'x' }] });
      const client = await daemon.connect(transport);
      const first = await client.call('catalog.refresh', {}, { operation: op() });
      const unauthorized = await client.request('catalog.refresh', {}, { operation: op() });
      t.same(unauthorized.error, {
        code: 'provider_error',
        message: 'the provider answered with an HTTP error status (401)',
      });
      for (let i = 0; i < 2; i++) {
        const malformed = await client.request('catalog.refresh', {}, { operation: op() });
        t.same(malformed.error, {
          code: 'provider_error',
          message: 'the provider sent a model list the daemon cannot read',
        });
      }
      t.same(await client.call('catalog.list'), first, 'the cache is what the last good refresh found');
      t.notMatch(client.received.join('\n'), SECRET);
    });

    t.test('an unreachable provider is provider_error', async (t) => {
      const daemon = await startDaemon(t, {
        provider: { baseUrl: 'http://127.0.0.1:9/v1', model: null, apiKey: null },
      });
      const client = await daemon.connect(transport);
      t.same((await client.request('catalog.refresh', {}, { operation: op() })).error, {
        code: 'provider_error',
        message: 'the provider could not be reached',
      });
    });

    t.test('without a base URL it is provider_unavailable', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(
        codeOf(await client.request('catalog.refresh', {}, { operation: op() })),
        'provider_unavailable',
      );
    });

    t.test('it is a mutation with an empty payload', async (t) => {
      const { daemon } = await catalogDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(codeOf(await client.request('catalog.refresh', {})), 'invalid_request');
      t.equal(
        codeOf(await client.request('catalog.refresh', { force: true }, { operation: op() })),
        'invalid_payload',
      );
    });
  });
}
