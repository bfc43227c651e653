import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

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
        sessions: 1,
        active_turns: 0,
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
      t.notMatch(JSON.stringify(answer), /sk-secret-key|127\.0\.0\.1/);
    });
  });
}
