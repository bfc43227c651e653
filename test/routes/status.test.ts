import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon, listing } from './catalog.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`status (${transport})`, async (t) => {
    t.test('without a provider the daemon is not ready for turns', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      await client.call('session.create', { workspace: daemon.workspace, title: null }, { operation: op() });
      const status = await client.call('status');
      t.same(status, {
        ready: false,
        provider: { kind: 'openai_chat_completions', model: null, configured: false },
        auth: { ready: false, method: null },
        sessions: 1,
        active_turns: 0,
        tools: {
          builtin: ['read_file', 'list_directory', 'search_files', 'update_plan', 'spawn_agent'],
          run_command: 'off',
        },
        mcp_servers: [],
        skills: { loaded: [], skipped: [], omitted: 0 },
        instructions: {
          home: { state: 'absent', bytes: 0, reason: null, linked: false },
          workspaces: [],
        },
      });
    });

    t.test('with a provider it is ready, and the key never shows', async (t) => {
      const daemon = await startDaemon(t, {
        provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'fake-model', apiKey: 'sk-secret-key' },
      });
      const client = await daemon.connect(transport);
      const answer = await client.request('status');
      t.same(answer.result?.provider, {
        kind: 'openai_chat_completions',
        model: 'fake-model',
        configured: true,
      });
      t.equal(answer.result?.ready, true);
      t.same(answer.result?.auth, { ready: true, method: 'env' });
      t.notMatch(JSON.stringify(answer), /sk-secret-key|127\.0\.0\.1/);
    });

    t.test('reflects the current model selection and login without the network', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      provider.replyModels(listing(['model-b']));
      const client = await daemon.connect(transport);
      t.match(await client.call('status'), { ready: false, provider: { model: null, configured: false } });
      await client.call('catalog.refresh', {}, { operation: op() });
      await client.call(
        'settings.update',
        { workspace: null, changes: { model: 'model-b' } },
        { operation: op() },
      );
      await client.call('auth.login', { method: 'api_key', api_key: 'sk-x' }, { operation: op() });
      t.match(await client.call('status'), {
        ready: true,
        provider: { model: 'model-b', configured: true },
        auth: { ready: true, method: 'stored' },
      });
      writeFileSync(join(daemon.home, 'settings.json'), JSON.stringify({ model: 'edited-by-hand' }));
      t.match(
        await client.call('status'),
        { provider: { model: 'edited-by-hand' } },
        'the settings file is read again',
      );
      t.equal(provider.requests.length, 1, 'only the refresh reached the provider');
    });
  });
}
