import t from 'tap';
import { registryRefusals } from '../../../core/registry/registry-refusals.js';
import { NameCatalog } from '../../../core/resources/names.js';
import { contentSha256, revisionSha256 } from '../../../core/resources/revision-hash.js';
import {
  attribution,
  messageOf,
  refusalOf,
  registryFixture,
  skillResource,
  TOOL_CONTRACT,
  toolContractWithTimeout,
  toolResource,
} from './registry-fixture.js';

const DESCRIPTOR_KEYS = [
  'captured_bytes',
  'content_sha256',
  'description',
  'kind',
  'name',
  'registered_by',
  'resource_id',
  'revision_id',
  'revision_sha256',
].sort();

t.test('the first list creates an empty registry with an unpredictable revision', async (t) => {
  const { registry } = registryFixture(t);
  t.equal(registry.has('s1'), false);
  const first = registry.list('s1');
  t.same(first.entries, []);
  t.match(first.registry_revision, /^reg_[A-Za-z0-9_-]{22}$/);
  t.equal(registry.has('s1'), true);
  t.equal(registry.list('s1').registry_revision, first.registry_revision, 'listing changes nothing');
  t.not(registry.list('s2').registry_revision, first.registry_revision, 'each registry draws its own');
  t.equal(registry.stats().registries, 2);
});

t.test('registration returns the complete descriptor and a fresh registry revision', async (t) => {
  const { registry } = registryFixture(t);
  const before = registry.list('s1').registry_revision;
  const registeredBy = { ...attribution({ grant_generation: 7 }), control_token: 'never-stored' };
  const staged = registry.beginRegistration(
    's1',
    { expected_revision: null, resource: toolResource('lookup', { description: 'Looks things up' }) },
    registeredBy,
    () => true,
  );
  await staged.capture();
  const { entry, registry_revision } = staged.publish();

  t.same(Object.keys(entry).sort(), DESCRIPTOR_KEYS);
  t.match(entry.resource_id, /^res_/);
  t.match(entry.revision_id, /^rev_/);
  t.equal(entry.kind, 'tool');
  t.equal(entry.name, 'lookup');
  t.equal(entry.description, 'Looks things up');
  const captured = Buffer.from(TOOL_CONTRACT, 'utf8');
  t.equal(entry.captured_bytes, captured.length);
  t.equal(entry.content_sha256, contentSha256(captured));
  t.equal(
    entry.revision_sha256,
    revisionSha256({ kind: 'tool', name: 'lookup', description: 'Looks things up', captured }),
  );
  t.same(entry.registered_by, {
    instance_id: registeredBy.instance_id,
    connection_id: registeredBy.connection_id,
    operation_id: registeredBy.operation_id,
    grant_generation: 7,
  });
  t.ok(Object.isFrozen(entry) && Object.isFrozen(entry.registered_by), 'attribution is immutable');
  t.not(registry_revision, before);
  t.same(registry.list('s1'), { registry_revision, entries: [entry] });
  t.notMatch(JSON.stringify(registry.list('s1')), /input_schema|never-stored/, 'no body, no token');
});

t.test('registration creates the registry when nothing listed it first', async (t) => {
  const { registry, create } = registryFixture(t);
  const { registry_revision } = await create('s1', skillResource('style'));
  t.equal(registry.list('s1').registry_revision, registry_revision);
  t.equal(registry.list('s1').entries.length, 1);
});

t.test('creation needs a free name and a null expected revision', async (t) => {
  const { create, register } = registryFixture(t);
  const { entry } = await create('s1', toolResource('lookup'));
  t.equal(
    await messageOf(() => create('s1', toolResource('lookup'))),
    registryRefusals.nameExists().message,
    'an existing name is a conflict for a creation',
  );
  t.equal(
    await refusalOf(() =>
      register('s1', { expected_revision: entry.revision_id, resource: toolResource('other') }),
    ),
    'conflict',
    'a revision of another resource does not replace by name',
  );
  t.equal(
    await refusalOf(() =>
      register('s2', { expected_revision: entry.revision_id, resource: toolResource('lookup') }),
    ),
    'conflict',
    'a revision from another session is stale here',
  );
});

t.test(
  'replacement keeps the resource id and allocates a fresh revision, even for identical bytes',
  async (t) => {
    const { registry, create, register } = registryFixture(t);
    const first = await create('s1', toolResource('lookup'));
    const second = await register('s1', {
      expected_revision: first.entry.revision_id,
      resource: toolResource('lookup'),
    });
    t.equal(second.entry.resource_id, first.entry.resource_id);
    t.not(second.entry.revision_id, first.entry.revision_id);
    t.equal(second.entry.content_sha256, first.entry.content_sha256);
    t.equal(second.entry.revision_sha256, first.entry.revision_sha256, 'same bytes and metadata, same hash');
    t.not(second.registry_revision, first.registry_revision);
    t.same(registry.list('s1').entries, [second.entry]);

    const renamed = await register('s1', {
      expected_revision: second.entry.revision_id,
      resource: toolResource('lookup', { description: 'changed' }),
    });
    t.equal(renamed.entry.content_sha256, first.entry.content_sha256, 'metadata-only keeps the content hash');
    t.not(renamed.entry.revision_sha256, first.entry.revision_sha256, 'and changes the revision hash');

    t.equal(
      await messageOf(() =>
        register('s1', { expected_revision: first.entry.revision_id, resource: toolResource('lookup') }),
      ),
      registryRefusals.staleRevision().message,
      'a superseded revision is stale',
    );
    t.same(registry.list('s1').entries, [renamed.entry], 'the refused replacement changed nothing');
  },
);

t.test('unrelated changes do not invalidate an expected revision', async (t) => {
  const { create, register, registry } = registryFixture(t);
  const a = await create('s1', toolResource('alpha'));
  const b = await create('s1', skillResource('beta'));
  await register('s1', {
    expected_revision: b.entry.revision_id,
    resource: skillResource('beta', { content: 'v2' }),
  });
  await create('s1', toolResource('gamma'));
  const replaced = await register('s1', {
    expected_revision: a.entry.revision_id,
    resource: toolResource('alpha', { content: toolContractWithTimeout(5_000) }),
  });
  t.equal(replaced.entry.resource_id, a.entry.resource_id);
  t.equal(registry.list('s1').entries.length, 3);
});

t.test('a tool and a skill cannot share a name', async (t) => {
  const { create, register } = registryFixture(t);
  const tool = await create('s1', toolResource('shared'));
  t.equal(
    await messageOf(() => create('s1', skillResource('shared'))),
    registryRefusals.kindCollision().message,
  );
  t.equal(
    await messageOf(() =>
      register('s1', { expected_revision: tool.entry.revision_id, resource: skillResource('shared') }),
    ),
    registryRefusals.kindCollision().message,
    'replacement must keep the kind',
  );
});

t.test('reserved names are a conflict, checked against the loaded catalog', async (t) => {
  const { create, setCatalog, begin } = registryFixture(t);
  t.equal(await refusalOf(() => create('s1', toolResource('read_file'))), 'conflict');
  t.equal(await refusalOf(() => create('s1', skillResource('mcp_anything'))), 'conflict');

  const staged = begin('s1', { expected_revision: null, resource: skillResource('house_style') });
  await staged.capture();
  setCatalog(new NameCatalog({ discoveredSkills: ['House_Style'] }));
  t.equal(await messageOf(() => staged.publish()), 'the resource name is reserved', 'publication rechecks');
  t.equal(await refusalOf(() => create('s1', toolResource('lookup'))), null, 'the slot was released');
});

t.test('unregister removes by id and current revision', async (t) => {
  const { registry, create, register } = registryFixture(t);
  const tool = await create('s1', toolResource('lookup'));
  const skill = await create('s1', skillResource('style'));
  const replaced = await register('s1', {
    expected_revision: skill.entry.revision_id,
    resource: skillResource('style', { content: 'v2' }),
  });

  t.equal(
    await messageOf(() =>
      registry.unregister('s1', {
        resource_id: skill.entry.resource_id,
        expected_revision: skill.entry.revision_id,
      }),
    ),
    registryRefusals.staleRevision().message,
  );
  t.equal(
    await refusalOf(() =>
      registry.unregister('s1', { resource_id: 'res_absent', expected_revision: 'rev_x' }),
    ),
    'resource_not_found',
  );
  t.equal(
    await refusalOf(() =>
      registry.unregister('s2', {
        resource_id: tool.entry.resource_id,
        expected_revision: tool.entry.revision_id,
      }),
    ),
    'resource_not_found',
    'another session has no such resource',
  );
  t.equal(registry.has('s2'), false, 'unregister does not create a registry');

  const removed = registry.unregister('s1', {
    resource_id: skill.entry.resource_id,
    expected_revision: replaced.entry.revision_id,
  });
  t.same(Object.keys(removed).sort(), ['registry_revision', 'removed_revision', 'resource_id']);
  t.equal(removed.resource_id, skill.entry.resource_id);
  t.equal(removed.removed_revision, replaced.entry.revision_id);
  t.not(removed.registry_revision, replaced.registry_revision);
  t.same(registry.list('s1'), { registry_revision: removed.registry_revision, entries: [tool.entry] });
  t.equal(
    await refusalOf(() =>
      registry.unregister('s1', {
        resource_id: skill.entry.resource_id,
        expected_revision: replaced.entry.revision_id,
      }),
    ),
    'resource_not_found',
    'a removed id is absent',
  );

  const recreated = await create('s1', skillResource('style', { content: 'v2' }));
  t.not(recreated.entry.resource_id, skill.entry.resource_id, 'recreation gets a new resource id');
});

t.test('list is sorted by kind, then name, without bodies or paths', async (t) => {
  const { registry, create } = registryFixture(t);
  await create('s1', toolResource('zeta'));
  await create('s1', skillResource('omega', { content: 'SECRET-BODY' }));
  await create('s1', toolResource('alpha'));
  await create('s1', skillResource('beta'));
  const { entries } = registry.list('s1');
  t.same(
    entries.map((entry) => `${entry.kind}:${entry.name}`),
    ['skill:beta', 'skill:omega', 'tool:alpha', 'tool:zeta'],
  );
  t.notMatch(JSON.stringify(entries), /SECRET-BODY|"source"|"path"|"content"/);
});

t.test('clear removes everything; an empty registry keeps its revision', async (t) => {
  const { registry, create } = registryFixture(t);
  const empty = registry.list('s1').registry_revision;
  t.same(registry.clear('s1', { expected_registry_revision: empty }), {
    registry_revision: empty,
    removed_count: 0,
  });
  await create('s1', toolResource('a'));
  const { registry_revision } = await create('s1', skillResource('b'));
  t.equal(
    await messageOf(() => registry.clear('s1', { expected_registry_revision: empty })),
    registryRefusals.staleRegistryRevision().message,
  );
  const cleared = registry.clear('s1', { expected_registry_revision: registry_revision });
  t.equal(cleared.removed_count, 2);
  t.not(cleared.registry_revision, registry_revision);
  t.same(registry.list('s1'), { registry_revision: cleared.registry_revision, entries: [] });
  t.same(registry.clear('s1', { expected_registry_revision: cleared.registry_revision }), {
    registry_revision: cleared.registry_revision,
    removed_count: 0,
  });
  t.equal(
    await refusalOf(() => registry.clear('s9', { expected_registry_revision: 'reg_x' })),
    'conflict',
    'no registry, no current revision',
  );
  t.equal(registry.has('s9'), false);
  t.equal(registry.stats().retained_bytes, 0, 'nothing stays charged');
});

t.test('every change allocates a registry revision never seen before', async (t) => {
  const { registry, create, register } = registryFixture(t);
  const seen = new Set([registry.list('s1').registry_revision]);
  const a = await create('s1', toolResource('a'));
  seen.add(a.registry_revision);
  const b = await register('s1', { expected_revision: a.entry.revision_id, resource: toolResource('a') });
  seen.add(b.registry_revision);
  const removed = registry.unregister('s1', {
    resource_id: b.entry.resource_id,
    expected_revision: b.entry.revision_id,
  });
  seen.add(removed.registry_revision);
  const c = await create('s1', toolResource('a'));
  seen.add(c.registry_revision);
  seen.add(registry.clear('s1', { expected_registry_revision: c.registry_revision }).registry_revision);
  t.equal(seen.size, 6);
});

t.test('malformed payloads are invalid_payload and take no slot', async (t) => {
  const { registry, begin, create } = registryFixture(t);
  const held = begin('s1', { expected_revision: null, resource: toolResource('held') });
  const cases: unknown[] = [
    null,
    {},
    { expected_revision: null },
    { expected_revision: null, resource: toolResource('x'), extra: 1 },
    { expected_revision: 'not an id', resource: toolResource('x') },
    { expected_revision: 7, resource: toolResource('x') },
    { expected_revision: null, resource: { kind: 'tool', name: 'x', description: '', contract: {} } },
    { expected_revision: null, resource: toolResource('Bad-Name') },
  ];
  for (const payload of cases) {
    t.equal(await refusalOf(() => begin('s2', payload)), 'invalid_payload', JSON.stringify(payload));
  }
  t.equal(await refusalOf(() => registry.unregister('s1', { resource_id: 'res_x' })), 'invalid_payload');
  t.equal(
    await refusalOf(() => registry.unregister('s1', { resource_id: 'res x', expected_revision: 'rev_x' })),
    'invalid_payload',
  );
  t.equal(
    await refusalOf(() => registry.clear('s1', { expected_registry_revision: null })),
    'invalid_payload',
  );
  t.equal(await refusalOf(() => registry.clear('s1', {})), 'invalid_payload');
  held.discard();

  for (const content of ['{"input_schema":{}}', 'not json', '{"a":1,"a":1}']) {
    t.equal(
      await refusalOf(() => create('s1', toolResource('bad', { content }))),
      'invalid_payload',
      content,
    );
  }
  t.equal(await refusalOf(() => create('s1', skillResource('bad', { content: '' }))), 'invalid_payload');
  t.equal(
    await refusalOf(() => create('s1', skillResource('bad', { content: 'a\u0000b' }))),
    'invalid_payload',
  );
  t.equal(registry.stats().capture_slot_busy, false, 'refused captures released the slot');
  t.same(registry.list('s1').entries, []);
});
