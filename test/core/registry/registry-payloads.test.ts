import t from 'tap';
import {
  parseClearPayload,
  parseRegisterPayload,
  parseUnregisterPayload,
  REGISTRY_PAYLOAD_REFUSALS,
} from '../../../core/registry/registry-payloads.js';
import { RESOURCE_INPUT_REFUSALS } from '../../../core/resources/resource-input.js';
import { messageOf, skillResource } from './registry-fixture.js';

t.test('register: exactly {expected_revision, resource}', async (t) => {
  const resource = skillResource('style');
  t.same(parseRegisterPayload({ expected_revision: null, resource }), {
    expected_revision: null,
    resource,
  });
  t.equal(
    parseRegisterPayload({ expected_revision: 'rev_a.b:c-d', resource }).expected_revision,
    'rev_a.b:c-d',
  );
  t.equal(await messageOf(() => parseRegisterPayload({ resource })), REGISTRY_PAYLOAD_REFUSALS.register);
  t.equal(await messageOf(() => parseRegisterPayload([])), REGISTRY_PAYLOAD_REFUSALS.register);
  t.equal(
    await messageOf(() => parseRegisterPayload({ expected_revision: 'x'.repeat(129), resource })),
    REGISTRY_PAYLOAD_REFUSALS.expected_revision,
  );
  t.equal(
    await messageOf(() =>
      parseRegisterPayload({ expected_revision: null, resource: { ...resource, extra: true } }),
    ),
    RESOURCE_INPUT_REFUSALS.shape,
  );
});

t.test('unregister: exactly {resource_id, expected_revision}, both ids', async (t) => {
  t.same(parseUnregisterPayload({ resource_id: 'res_1', expected_revision: 'rev_1' }), {
    resource_id: 'res_1',
    expected_revision: 'rev_1',
  });
  for (const payload of [
    { resource_id: 'res_1' },
    { resource_id: 'res_1', expected_revision: null },
    { resource_id: '', expected_revision: 'rev_1' },
    { resource_id: 'res_1', expected_revision: 'rev_1', more: 1 },
    'res_1',
  ]) {
    t.equal(await messageOf(() => parseUnregisterPayload(payload)), REGISTRY_PAYLOAD_REFUSALS.unregister);
  }
});

t.test('clear: exactly {expected_registry_revision}', async (t) => {
  t.same(parseClearPayload({ expected_registry_revision: 'reg_1' }), { expected_registry_revision: 'reg_1' });
  for (const payload of [
    {},
    { expected_registry_revision: null },
    { expected_registry_revision: 'a b' },
    null,
  ]) {
    t.equal(await messageOf(() => parseClearPayload(payload)), REGISTRY_PAYLOAD_REFUSALS.clear);
  }
});
