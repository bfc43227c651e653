import t from 'tap';
import { startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`capabilities (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('repeats the initialize selection unchanged', async (t) => {
      const client = await daemon.open(transport);
      const init = await client.initialize();
      const first = await client.call('capabilities');
      const second = await client.call('capabilities');
      t.same(first.negotiated_capabilities, init.negotiated_capabilities);
      t.same(first.capabilities, init.capabilities);
      t.same(second, first);
      const capabilities = first.capabilities as { operations: string[]; events: string[] };
      t.ok(capabilities.operations.includes('session.claim'));
      t.ok(capabilities.events.includes('session.control_revoked'));
    });

    t.test('lists every ordinary method, the auth, catalog and settings methods included', async (t) => {
      const client = await daemon.connect(transport, []);
      const { capabilities } = await client.call('capabilities');
      t.same((capabilities as { operations: string[] }).operations, [
        'auth.cancel',
        'auth.login',
        'auth.login_callback',
        'auth.logout',
        'auth.status',
        'capabilities',
        'catalog.list',
        'catalog.refresh',
        'initialize',
        'operation.lookup',
        'session.claim',
        'session.close',
        'session.create',
        'session.list',
        'session.release',
        'session.replay',
        'settings.get',
        'settings.update',
        'status',
        'turn.start',
        'turn.stop',
      ]);
    });

    t.test('advertises every profile bound by its spec name', async (t) => {
      const client = await daemon.connect(transport);
      const { capabilities } = await client.call('capabilities');
      const callbacks = (capabilities as { application_callbacks: Record<string, unknown> })
        .application_callbacks;
      t.match(callbacks, {
        profile: 'application_resources_v1',
        tools_per_session: 16,
        skills_per_session: 16,
        registry_bytes: 32768,
        combined_skill_bytes: 16384,
        retained_snapshots: 256,
        retained_entries: 1024,
        retained_bytes: 8388608,
        registry_sessions: 256,
        registry_idle_timeout_ms: 900000,
        tool_source_bytes: 32768,
        skill_source_bytes: 16384,
        source_path_bytes: 1024,
        executors: 256,
        calls: 32,
      });
    });

    t.test('profile methods are unknown to an ordinary v2 connection', async (t) => {
      const client = await daemon.connect(transport, []);
      const { capabilities } = await client.call('capabilities');
      t.notOk('application_callbacks' in (capabilities as object));
    });
  });
}
