import t from 'tap';
import { homeId } from '../../core/endpoint/home-identity.js';
import { startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`initialize (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('negotiates the profile and echoes it', async (t) => {
      const client = await daemon.open(transport);
      const result = await client.initialize(['application_resources_v1', 'something_unknown']);
      t.equal(result.wire, 2);
      t.same(result.negotiated_capabilities, ['application_resources_v1']);
      t.equal(result.instance_id, daemon.app.instanceId);
      t.equal(result.home_id, homeId(daemon.home), 'the hash of the real path of the home it serves');
      t.match(result.home_id, /^[0-9a-f]{16}$/);
      t.match(result.connection_id, /^conn_/);
      t.same(result.limits, { frame_bytes: 65536, payload_bytes: 32768, record_bytes: 65536 });
      const callbacks = (result.capabilities as Record<string, Record<string, unknown>>)
        .application_callbacks;
      t.equal(callbacks?.registry_idle_timeout_ms, 900000);
      t.same(callbacks?.source_kinds, ['inline', 'workspace_file']);
    });

    t.test('ordinary v2 negotiates nothing and advertises no profile', async (t) => {
      const client = await daemon.open(transport);
      const result = await client.initialize([]);
      t.same(result.negotiated_capabilities, []);
      t.notOk('application_callbacks' in (result.capabilities as object));
    });

    t.test(
      'a retired token rejects the whole initialize and leaves the connection uninitialized',
      async (t) => {
        for (const retired of ['application_callbacks_inline_v1', 'application_callbacks_session_v1']) {
          const client = await daemon.open(transport);
          const refused = await client.request('initialize', {
            wire: 2,
            client: { name: 'c', version: '1' },
            requested_capabilities: ['application_resources_v1', retired],
          });
          t.equal(refused.error?.code, 'unsupported_capability');
          const status = await client.request('status');
          t.equal(status.error?.code, 'not_initialized');
          const result = await client.initialize();
          t.same(result.negotiated_capabilities, ['application_resources_v1']);
        }
      },
    );

    t.test('only wire 2', async (t) => {
      const client = await daemon.open(transport);
      const refused = await client.request('initialize', {
        wire: 1,
        client: { name: 'c', version: '1' },
        requested_capabilities: [],
      });
      t.equal(refused.error?.code, 'unsupported_wire_version');
    });

    t.test('a second initialize is refused and the selection stays', async (t) => {
      const client = await daemon.connect(transport);
      const again = await client.request('initialize', {
        wire: 2,
        client: { name: 'c', version: '1' },
        requested_capabilities: [],
      });
      t.equal(again.error?.code, 'already_initialized');
      const capabilities = await client.call('capabilities');
      t.same(capabilities.negotiated_capabilities, ['application_resources_v1']);
    });

    t.test('requests before initialize are not_initialized', async (t) => {
      const client = await daemon.open(transport);
      t.equal((await client.request('status')).error?.code, 'not_initialized');
      t.equal((await client.request('no.such_method')).error?.code, 'unknown_method');
    });

    t.test('the payload is strict', async (t) => {
      const client = await daemon.open(transport);
      const extra = await client.request('initialize', {
        wire: 2,
        client: { name: 'c', version: '1' },
        requested_capabilities: [],
        extra: true,
      });
      t.equal(extra.error?.code, 'invalid_payload');
      const coerced = await client.request('initialize', {
        wire: '2',
        client: { name: 'c', version: '1' },
        requested_capabilities: [],
      });
      t.equal(coerced.error?.code, 'invalid_payload');
    });
  });
}

t.test('on stdio the profile is never negotiated', async (t) => {
  const daemon = await startDaemon(t);

  t.test('requesting it refuses the whole initialize and leaves the connection uninitialized', async (t) => {
    const client = await daemon.open('stdio');
    const refused = await client.request('initialize', {
      wire: 2,
      client: { name: 'c', version: '1' },
      requested_capabilities: ['something_unknown', 'application_resources_v1'],
    });
    t.same(refused.error, {
      code: 'unsupported_capability',
      message: 'the profile is offered only on the Unix socket',
    });
    t.equal((await client.request('status')).error?.code, 'not_initialized');
    const result = await client.initialize(['something_unknown']);
    t.same(result.negotiated_capabilities, [], 'a later ordinary initialize succeeds');
    t.notOk('application_callbacks' in (result.capabilities as object), 'no profile is advertised');
    t.equal(
      (await client.request('session.resources.list')).error?.code,
      'unknown_method',
      'profile methods do not exist on it',
    );
  });

  t.test('a retired token is refused there too', async (t) => {
    const client = await daemon.open('stdio');
    const refused = await client.request('initialize', {
      wire: 2,
      client: { name: 'c', version: '1' },
      requested_capabilities: ['application_callbacks_session_v1'],
    });
    t.equal(refused.error?.code, 'unsupported_capability');
    t.equal((await client.request('status')).error?.code, 'not_initialized');
  });
});
