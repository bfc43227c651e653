import t from 'tap';
import { registryRefusals } from '../../../core/registry/registry-refusals.js';
import { NameCatalog } from '../../../core/resources/names.js';
import {
  messageOf,
  refusalOf,
  registryFixture,
  skillResource,
  TOOL_CONTRACT,
  toolContractWithTimeout,
  toolResource,
} from './registry-fixture.js';

t.test('no registry, no snapshot', async (t) => {
  const { registry } = registryFixture(t);
  t.equal(registry.snapshot('s1'), null);
  t.equal(registry.has('s1'), false, 'a snapshot does not create a registry');
});

t.test('a snapshot holds the complete current content, in order', async (t) => {
  const { registry, create } = registryFixture(t);
  await create('s1', skillResource('zulu', { content: 'Last skill.' }));
  await create('s1', toolResource('lookup'));
  await create('s1', skillResource('alpha', { content: 'First skill, with ünïcode.' }));
  const { registry_revision, entries } = registry.list('s1');
  const pin = registry.snapshot('s1');
  if (!pin) throw new Error('expected a snapshot');
  const { snapshot } = pin;
  t.equal(snapshot.session_id, 's1');
  t.equal(snapshot.registry_revision, registry_revision);
  t.same(snapshot.descriptors, entries, 'descriptors as listed');
  t.same(
    snapshot.resources.map((revision) => revision.name),
    ['alpha', 'zulu', 'lookup'],
  );
  t.same(
    snapshot.skills.map((revision) => revision.name),
    ['alpha', 'zulu'],
  );
  t.same(snapshot.tools[0]?.contract, JSON.parse(TOOL_CONTRACT));
  t.equal(snapshot.tools[0]?.instructions, null);
  t.equal(snapshot.skills[0]?.contract, null);
  t.equal(snapshot.instructions, 'First skill, with ünïcode.\nLast skill.');
  t.equal(snapshot.instruction_bytes, Buffer.byteLength(snapshot.instructions));
  t.ok(Object.isFrozen(snapshot) && Object.isFrozen(snapshot.resources) && Object.isFrozen(snapshot.tools));
  t.ok(Object.isFrozen(snapshot.tools[0]) && Object.isFrozen(snapshot.tools[0]?.contract));
  t.equal(pin.released, false);
  pin.release();
  t.equal(pin.released, true);
});

t.test('exact captured bytes are kept, and handed out only as copies', async (t) => {
  const { registry, create } = registryFixture(t);
  await create('s1', skillResource('style', { content: 'Exact.' }));
  const pin = registry.snapshot('s1');
  const revision = pin?.snapshot.skills[0];
  const copy = revision?.capturedBytes();
  t.equal(copy?.toString('utf8'), 'Exact.');
  copy?.fill(0);
  t.equal(revision?.capturedBytes().toString('utf8'), 'Exact.');
  pin?.release();
});

t.test('replacement and clear never reach a pinned snapshot; its charge stays until release', async (t) => {
  const { registry, create, register } = registryFixture(t);
  const tool = await create('s1', toolResource('lookup'));
  const skill = await create('s1', skillResource('style', { content: 'Old instructions.' }));
  const chargedBefore = registry.stats().retained_bytes;
  const pin = registry.snapshot('s1');
  const pinnedCharge = registry.stats().retained_bytes;
  t.equal(
    pinnedCharge - chargedBefore,
    'Old instructions.'.length,
    'a pin adds only its combined instructions',
  );

  const replaced = await register('s1', {
    expected_revision: tool.entry.revision_id,
    resource: toolResource('lookup', { content: toolContractWithTimeout(9_000) }),
  });
  await register('s1', {
    expected_revision: skill.entry.revision_id,
    resource: skillResource('style', { content: 'New instructions.' }),
  });
  t.equal(registry.stats().retained_entries, 4, 'old and new revisions are both retained');
  t.equal(pin?.snapshot.tools[0]?.contract?.timeout_ms, 120_000, 'the pinned contract is the old one');
  t.equal(pin?.snapshot.instructions, 'Old instructions.');

  const later = registry.snapshot('s1');
  t.equal(
    later?.snapshot.tools[0]?.descriptor.revision_id,
    replaced.entry.revision_id,
    'later turns see the replacement',
  );
  t.equal(later?.snapshot.instructions, 'New instructions.');
  t.equal(registry.stats().retained_snapshots, 2);

  registry.clear('s1', { expected_registry_revision: registry.list('s1').registry_revision });
  t.equal(registry.stats().retained_entries, 4, 'clear releases no pinned capacity');
  t.equal(pin?.snapshot.resources.length, 2);
  later?.release();
  t.equal(registry.stats().retained_entries, 2);
  pin?.release();
  t.same(
    [registry.stats().retained_entries, registry.stats().retained_snapshots, registry.stats().retained_bytes],
    [0, 0, 0],
  );
});

t.test('pins of one registry revision share one snapshot, counted once', async (t) => {
  const { registry, create } = registryFixture(t);
  await create('s1', skillResource('style', { content: 'Shared.' }));
  const first = registry.snapshot('s1');
  const charged = registry.stats().retained_bytes;
  const second = registry.snapshot('s1');
  t.equal(second?.snapshot, first?.snapshot, 'the same immutable snapshot');
  t.equal(registry.stats().retained_bytes, charged);
  t.equal(registry.stats().retained_snapshots, 1);
  first?.release();
  first?.release();
  t.equal(
    registry.stats().retained_snapshots,
    1,
    'still pinned by the second; a repeated release is harmless',
  );
  second?.release();
  t.equal(registry.stats().retained_snapshots, 0);
  const third = registry.snapshot('s1');
  t.not(third?.snapshot, first?.snapshot, 'an unpinned snapshot is not revived');
  t.equal(third?.snapshot.registry_revision, first?.snapshot.registry_revision);
  third?.release();
});

t.test('an empty registry gives an empty snapshot', async (t) => {
  const { registry } = registryFixture(t);
  registry.list('s1');
  const pin = registry.snapshot('s1');
  t.same(pin?.snapshot.resources, []);
  t.equal(pin?.snapshot.instructions, '');
  t.equal(pin?.snapshot.instruction_bytes, 0);
  t.equal(registry.stats().retained_snapshots, 1);
  pin?.release();
});

t.test('turn preparation checks the loaded catalog', async (t) => {
  const { registry, create, setCatalog } = registryFixture(t);
  await create('s1', toolResource('deploy'));
  setCatalog(new NameCatalog({ disabledNames: ['DEPLOY'] }));
  t.equal(await messageOf(() => registry.snapshot('s1')), 'the resource name is reserved');
  t.equal(registry.stats().retained_snapshots, 0, 'nothing was pinned');
});

t.test('snapshot bytes must fit the daemon budget', async (t) => {
  // Charges: ≈ 3,650, 470 and 2,450 for the three registrations, then 1,600, 10 and 1,000 per snapshot.
  const { registry, create } = registryFixture(t, {
    limits: { capture_reservation_bytes: 100, retained_bytes: 8_600 },
  });
  await create('s1', skillResource('style', { content: 'x'.repeat(1_600) }));
  await create('s2', skillResource('other', { content: 'y'.repeat(10) }));
  await create('s3', skillResource('style', { content: 'z'.repeat(1_000) }));
  const first = registry.snapshot('s1');
  t.equal(await messageOf(() => registry.snapshot('s1')?.release()), null, 'a shared pin adds nothing');
  const small = registry.snapshot('s2');
  t.ok(small, 'a small one fits');
  t.equal(await messageOf(() => registry.snapshot('s3')), registryRefusals.retainedBytes().message);
  first?.release();
  t.equal(await refusalOf(() => registry.snapshot('s3')?.release()), null);
  small?.release();
  t.equal(registry.stats().retained_snapshots, 0);
});
