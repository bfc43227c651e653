import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { listing } from '../routes/catalog.fixture.js';
import { resultOf } from '../routes/session.resources.fixture.js';
import { startTurn } from '../routes/turn.fixture.js';
import { WAIT_MS } from './seed-fixture.js';
import { shortTempDir, startDaemon } from './spawn-daemon.js';

/**
 * A home from before provider definitions: only the `provider` section and `--provider-base-url`. It
 * starts and answers as it did: one Chat Completions provider, bare model ids, no per-provider members.
 */
t.test('an old home with only the provider section starts unchanged', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(home);
  mkdirSync(workspace);
  const provider = await ScriptedProvider.start(t);
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({ provider: { headers: { 'X-Title': 'magi' }, stream_usage: false } }),
  );
  const socket = join(root, 'd.sock');
  await startDaemon(t, {
    socket,
    home,
    args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
    env: { MAGI_API_KEY: 'sk-legacy-env' },
  });
  const { client } = await connectSocket(socket);
  t.teardown(() => client.close());
  await client.initialize(['application_resources_v1']);

  t.same(await client.call('auth.status'), { ready: true, method: 'env' }, 'no providers member');
  const status = await client.call('status');
  t.same(status.provider, { kind: 'openai_chat_completions', model: 'scripted-model', configured: true });
  t.equal(status.ready, true);
  t.notOk('providers' in status);

  provider.replyModels(listing(['scripted-model', 'other-model']));
  const catalog = await client.call('catalog.refresh', {}, { operation: op() });
  t.same(catalog.models, [
    { id: 'scripted-model', owned_by: 'lab' },
    { id: 'other-model', owned_by: 'lab' },
  ]);
  t.notOk('failed' in catalog);
  await client.call(
    'settings.update',
    { workspace: null, changes: { model: 'other-model' } },
    { operation: op() },
  );

  provider.reply(['Hello from the old home.']);
  const { session, control } = await claimedSession(client, workspace);
  resultOf(
    await startTurn(
      { client, session, control, generation: 1, connectionId: '', instanceId: '' },
      { prompt: 'Hi' },
    ),
  );
  t.match((await client.event('turn.terminal', WAIT_MS)).payload, {
    status: 'completed',
    assistant_text: 'Hello from the old home.',
  });
  const sent = provider.requests.at(-1)!;
  t.equal(sent.path, '/v1/chat/completions');
  t.match(sent.headers, { 'x-title': 'magi', authorization: 'Bearer sk-legacy-env' });
  t.match(sent.body, { model: 'other-model', stream: true });
  t.notOk('stream_options' in sent.body);
  t.notOk(existsSync(join(home, 'provider-keys.json')));
  t.same(readdirSync(home).sort(), [
    'config.json',
    'magid.lock',
    'models.json',
    'run',
    'settings.json',
    'state',
  ]);
});
