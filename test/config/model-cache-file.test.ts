import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MODEL_CACHE_FILE_NAME, readModelCache } from '../../config/model-cache-file.js';

t.test("the cache is projected again on the way in, each model's provider kept", async (t) => {
  const home = t.testdir();
  writeFileSync(
    join(home, MODEL_CACHE_FILE_NAME),
    JSON.stringify({
      models: [
        { id: 'gpt-local', owned_by: 'lab' },
        { id: 'openai/o4-mini', owned_by: null, provider: 'openai' },
        { id: 'openai/o4-mini', owned_by: null, provider: 'openai' },
        { id: 'bad id', provider: 'x' },
        { id: 'anthropic/claude', owned_by: null, provider: 7 },
      ],
      truncated: false,
      refreshed_at: 1_767_225_600_000,
    }),
  );
  t.same(await readModelCache(home), {
    models: [
      { id: 'gpt-local', owned_by: 'lab' },
      { id: 'openai/o4-mini', owned_by: null, provider: 'openai' },
      { id: 'anthropic/claude', owned_by: null },
    ],
    truncated: false,
    refreshed_at: 1_767_225_600_000,
  });
});

t.test('more than 100 cached models are cut and marked', async (t) => {
  const home = t.testdir();
  const models = Array.from({ length: 101 }, (_, i) => ({ id: `m${i}`, owned_by: null }));
  writeFileSync(
    join(home, MODEL_CACHE_FILE_NAME),
    JSON.stringify({ models, truncated: false, refreshed_at: 1 }),
  );
  const cache = await readModelCache(home);
  t.equal(cache.models.length, 100);
  t.equal(cache.truncated, true);
});
