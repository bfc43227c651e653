import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { homeId } from '../../core/endpoint/home-identity.js';
import { OPERATION_LIMITS, PROFILE_LIMITS } from '../../core/limits.js';
import { ENTRY_BYTES } from '../../core/operations/operation-ledger.js';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon, listing } from './catalog.fixture.js';
import { turnDaemon } from './turn.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`status (${transport})`, async (t) => {
    t.test('without a provider the daemon is not ready for turns', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      await client.call('session.create', { workspace: daemon.workspace, title: null }, { operation: op() });
      const { retention: _retention, ...status } = await client.call('status');
      t.same(status, {
        ready: false,
        home_id: homeId(daemon.home),
        provider: { kind: 'openai_chat_completions', model: null, configured: false },
        auth: { ready: false, method: null },
        sessions: 1,
        active_turns: 0,
        tools: {
          builtin: ['read_file', 'list_directory', 'search_files', 'update_plan', 'spawn_agent'],
          run_command: 'off',
        },
        sandbox: { run_command: 'off', reason: null, bounds: null, commands: null },
        mcp_servers: [],
        skills: { loaded: [], skipped: [], omitted: 0 },
        instructions: {
          home: { state: 'absent', bytes: 0, reason: null, linked: false },
          workspaces: [],
        },
        storage: { full: false },
      });
    });

    t.test('reports what the daemon retains against its bounds, until it expires', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const operation = op();
      const created = await client.call(
        'session.create',
        { workspace: daemon.workspace, title: null },
        { operation },
      );
      const refused = await client.request('session.claim', {}, { session: 'ses_missing', operation: op() });
      t.equal(refused.error?.code, 'unknown_session');
      const bytes = ENTRY_BYTES + Buffer.byteLength(operation) + Buffer.byteLength(JSON.stringify(created));
      t.same((await client.call('status')).retention, {
        operations: {
          retained: 1,
          bound: OPERATION_LIMITS.table_operations,
          bytes,
          bytes_bound: OPERATION_LIMITS.table_bytes,
          saturated: false,
          frees_in_ms: 600_000,
        },
        recovery_slots: { slots: 0, retained: 0, bytes: 0, full: 0 },
        refusals: { retained: 1, bound: OPERATION_LIMITS.refusals, saturated: false },
        connections_at_share: 0,
        evidence_turns: {
          retained: 0,
          bound: PROFILE_LIMITS.evidence_turns,
          saturated: false,
          frees_in_ms: null,
        },
      });
      daemon.clock.advance(600_000);
      t.match((await client.call('status')).retention, {
        operations: { retained: 0, bytes: 0, frees_in_ms: null },
        refusals: { retained: 0 },
      });
    });

    t.test('counts the turns of evidence a profile connection keeps', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      provider.reply(['Done.']);
      const client = await daemon.connect(transport);
      const { session, control } = await claimedSession(client, daemon.workspace);
      await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
      await client.event('turn.terminal');
      daemon.clock.advance(1_000);
      const { retention } = (await client.call('status')) as { retention: Record<string, unknown> };
      t.same(retention.evidence_turns, {
        retained: 1,
        bound: PROFILE_LIMITS.evidence_turns,
        saturated: false,
        frees_in_ms: 599_000,
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
