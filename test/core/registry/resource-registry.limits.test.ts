import t from 'tap';
import { PROFILE_LIMITS } from '../../../core/limits.js';
import { registryRefusals } from '../../../core/registry/registry-refusals.js';
import type { ResourceRegistry } from '../../../core/registry/resource-registry.js';
import type { ResourceDescriptor } from '../../../core/registry/resource-revision.js';
import { messageOf, refusalOf, registryFixture, skillResource, toolResource } from './registry-fixture.js';

const FIXED_ATTRIBUTION = {
  instance_id: 'ins_x',
  connection_id: 'con_x',
  operation_id: 'op_x',
  grant_generation: 1,
};

/** Registers with a fixed attribution, so descriptor sizes depend only on the resource. */
async function registerFixed(
  registry: ResourceRegistry,
  sessionId: string,
  resource: unknown,
): Promise<ResourceDescriptor> {
  const staged = registry.beginRegistration(
    sessionId,
    { expected_revision: null, resource },
    FIXED_ATTRIBUTION,
    () => true,
  );
  await staged.capture();
  return staged.publish().entry;
}

/** A skill's charge: its exact bytes, its instruction text (the same bytes) and its descriptor. */
function skillCharge(entry: ResourceDescriptor): number {
  return entry.captured_bytes * 2 + Buffer.byteLength(JSON.stringify(entry));
}

t.test('16 tools and 16 skills per session', async (t) => {
  const { registry, create, register } = registryFixture(t);
  let lastTool: ResourceDescriptor | undefined;
  for (let i = 0; i < PROFILE_LIMITS.tools_per_session; i++) {
    lastTool = (await create('s1', toolResource(`tool_${i}`))).entry;
    await create('s1', skillResource(`skill_${i}`));
  }
  t.equal(
    await messageOf(() => create('s1', toolResource('tool_extra'))),
    registryRefusals.tooManyTools().message,
  );
  t.equal(
    await messageOf(() => create('s1', skillResource('skill_extra'))),
    registryRefusals.tooManySkills().message,
  );
  t.equal(
    await refusalOf(() =>
      register('s1', { expected_revision: lastTool?.revision_id, resource: toolResource('tool_15') }),
    ),
    null,
    'a replacement needs no new place',
  );
  t.equal(registry.list('s1').entries.length, 32, 'nothing was evicted');
  t.equal(await refusalOf(() => create('s2', toolResource('tool_extra'))), null, 'the bound is per session');
});

t.test('32 KiB of registry accounting, exactly', async (t) => {
  const { registry } = registryFixture(t);
  const first = await registerFixed(
    registry,
    's1',
    skillResource('a', { content: 'a'.repeat(5_000), description: '' }),
  );
  await registerFixed(registry, 's2', skillResource('a', { content: 'a'.repeat(5_000), description: '' }));
  const room = PROFILE_LIMITS.registry_bytes - skillCharge(first);

  // Measure the descriptor of a second skill of the same digit count, then size it to fill the room exactly.
  const probe = await registerFixed(
    registry,
    's3',
    skillResource('b', { content: 'b'.repeat(10_000), description: '' }),
  );
  const descriptorBytes = skillCharge(probe) - 20_000;
  const contentBytes = Math.floor((room - descriptorBytes) / 2);
  const description = 'd'.repeat(room - descriptorBytes - contentBytes * 2);
  const fitting = skillResource('b', { content: 'b'.repeat(contentBytes), description });
  const oneOver = skillResource('b', { content: 'b'.repeat(contentBytes), description: `${description}d` });

  t.equal(
    await messageOf(() => registerFixed(registry, 's2', oneOver)),
    registryRefusals.registryBytes().message,
  );
  const filled = await registerFixed(registry, 's1', fitting);
  t.equal(skillCharge(first) + skillCharge(filled), PROFILE_LIMITS.registry_bytes, 'filled to the byte');
  t.equal(registry.list('s2').entries.length, 1, 'the refusal evicted nothing');
  t.equal(
    await messageOf(() => registerFixed(registry, 's1', skillResource('c', { content: 'c' }))),
    registryRefusals.registryBytes().message,
  );
});

t.test('registry bytes are judged before capture when the source size is known, exactly after', async (t) => {
  const { registry, begin, create, register } = registryFixture(t);
  const big = { content: 'x'.repeat(5_000) };
  const a = await create('s1', skillResource('a', big));
  await create('s1', skillResource('b', big));
  await create('s1', skillResource('c', big));
  t.ok(registry.stats().retained_bytes > 3 * 10_000);
  t.equal(
    await refusalOf(() => begin('s1', { expected_revision: null, resource: skillResource('d', big) })),
    'limit_exceeded',
    'refused at admission: the inline text alone does not fit',
  );
  const late = begin('s1', {
    expected_revision: null,
    resource: skillResource('d', { content: 'x'.repeat(700) }),
  });
  await late.capture();
  t.equal(
    await messageOf(() => late.publish()),
    registryRefusals.registryBytes().message,
    'refused at publication: text, normalized text and descriptor do not fit',
  );
  t.equal(
    await refusalOf(() =>
      register('s1', {
        expected_revision: a.entry.revision_id,
        resource: skillResource('a', { content: 'y'.repeat(5_500) }),
      }),
    ),
    null,
    'a replacement is judged without the revision it replaces',
  );
  t.equal(registry.list('s1').entries.length, 3);
});

t.test('16 KiB of combined skill text, newline separators included', async (t) => {
  const { registry, create, register } = registryFixture(t, { limits: { registry_bytes: 1 << 20 } });
  const half = PROFILE_LIMITS.combined_skill_bytes / 2;
  const a = await create('s1', skillResource('a', { content: 'a'.repeat(half) }));
  t.equal(
    await messageOf(() => create('s1', skillResource('b', { content: 'b'.repeat(half) }))),
    registryRefusals.combinedSkillBytes().message,
    '8192 + 1 + 8192 is one byte over',
  );
  await create('s1', skillResource('b', { content: 'b'.repeat(half - 1) }));
  await create('s1', toolResource('tools_do_not_count'));
  t.equal(await refusalOf(() => create('s1', skillResource('c', { content: 'c' }))), 'limit_exceeded');
  t.equal(
    await refusalOf(() =>
      register('s1', {
        expected_revision: a.entry.revision_id,
        resource: skillResource('a', { content: 'z'.repeat(half) }),
      }),
    ),
    null,
    'a replacement counts its new text instead of the old',
  );
  const pin = registry.snapshot('s1');
  t.equal(pin?.snapshot.instruction_bytes, PROFILE_LIMITS.combined_skill_bytes);
  t.equal(Buffer.byteLength(pin?.snapshot.instructions ?? ''), PROFILE_LIMITS.combined_skill_bytes);
  pin?.release();
});

t.test('256 registry sessions, empty claimed registries included', async (t) => {
  const { registry, create } = registryFixture(t);
  for (let i = 0; i < PROFILE_LIMITS.registry_sessions; i++) registry.list(`s${i}`);
  t.equal(await messageOf(() => registry.list('extra')), registryRefusals.registrySessions().message);
  t.equal(await refusalOf(() => create('extra', toolResource('a'))), 'limit_exceeded');
  t.equal(registry.has('extra'), false);
  registry.controlEnded('s0');
  t.equal(registry.has('s0'), false, 'an empty registry goes when unclaimed');
  t.equal(await refusalOf(() => registry.list('extra')), null);
});

t.test('retained entries across the daemon, shared references counted once', async (t) => {
  const { registry, create, register } = registryFixture(t, { limits: { retained_entries: 3 } });
  const a = await create('s1', toolResource('a'));
  await create('s2', toolResource('b'));
  const pin = registry.snapshot('s1');
  t.equal(registry.stats().retained_entries, 2, 'a pinned revision is still one entry');
  const replaced = await register('s1', {
    expected_revision: a.entry.revision_id,
    resource: toolResource('a'),
  });
  t.equal(registry.stats().retained_entries, 3, 'the pinned old revision stays retained');
  t.equal(await messageOf(() => create('s2', toolResource('c'))), registryRefusals.retainedEntries().message);
  t.equal(
    await refusalOf(() =>
      register('s1', { expected_revision: replaced.entry.revision_id, resource: toolResource('a') }),
    ),
    'limit_exceeded',
    'a replacement needs room beside the revision it replaces',
  );
  pin?.release();
  t.equal(registry.stats().retained_entries, 2);
  t.equal(await refusalOf(() => create('s2', toolResource('c'))), null);
  t.equal(registry.list('s1').entries.length + registry.list('s2').entries.length, 3);
});

t.test('retained snapshots across the daemon', async (t) => {
  const { registry, create } = registryFixture(t, { limits: { retained_snapshots: 2 } });
  await create('s1', toolResource('a'));
  await create('s2', toolResource('a'));
  registry.list('s3');
  const pins = [registry.snapshot('s1'), registry.snapshot('s1'), registry.snapshot('s2')];
  t.equal(registry.stats().retained_snapshots, 2, 'pins of one registry revision share a snapshot');
  t.equal(
    await messageOf(() => registry.snapshot('s3')),
    registryRefusals.retainedSnapshots().message,
    'even an empty one',
  );
  pins[2]?.release();
  t.equal(await refusalOf(() => registry.snapshot('s3')?.release()), null);
  for (const pin of pins) pin?.release();
  t.equal(registry.stats().retained_snapshots, 0);
});
