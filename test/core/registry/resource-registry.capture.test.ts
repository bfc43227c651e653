import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CAPTURE_REFUSALS } from '../../../core/capture/refusals.js';
import type { WorkspaceReader } from '../../../core/capture/workspace-reader.js';
import { WireError } from '../../../core/errors.js';
import { PROFILE_LIMITS } from '../../../core/limits.js';
import { registryRefusals } from '../../../core/registry/registry-refusals.js';
import { ResourceRegistry } from '../../../core/registry/resource-registry.js';
import { NameCatalog } from '../../../core/resources/names.js';
import {
  contentSha256,
  type DescriptorHashes,
  revisionSha256,
} from '../../../core/resources/revision-hash.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import {
  attribution,
  fileResource,
  messageOf,
  refusalOf,
  registryFixture,
  skillResource,
  TOOL_CONTRACT,
  toolResource,
  unusedReader,
} from './registry-fixture.js';

const RESERVATION = PROFILE_LIMITS.capture_reservation_bytes;

t.test('one capture slot: other registrations are busy, everything else stays available', async (t) => {
  const { registry, begin, create } = registryFixture(t);
  const kept = await create('s1', toolResource('kept'));
  const staged = begin('s1', { expected_revision: null, resource: skillResource('style') });
  t.equal(staged.state, 'staged');
  const stats = registry.stats();
  t.equal(stats.capture_slot_busy, true);
  t.equal(
    stats.retained_bytes,
    kept.entry.captured_bytes * 2 + Buffer.byteLength(JSON.stringify(kept.entry)) + RESERVATION,
  );

  for (const session of ['s1', 's2']) {
    t.equal(
      await messageOf(() => begin(session, { expected_revision: null, resource: toolResource('other') })),
      registryRefusals.captureBusy().message,
      `busy for ${session}`,
    );
  }
  t.equal(
    await refusalOf(() => begin('s2', { expected_revision: null, resource: toolResource('read_file') })),
    'configuration_busy',
    'busy before the name is judged',
  );
  t.equal(registry.list('s2').entries.length, 0, 'list is available');
  const pin = registry.snapshot('s1');
  t.equal(pin?.snapshot.resources.length, 1, 'turns can take their snapshot');
  pin?.release();
  const removed = registry.unregister('s1', {
    resource_id: kept.entry.resource_id,
    expected_revision: kept.entry.revision_id,
  });
  t.equal(registry.clear('s1', { expected_registry_revision: removed.registry_revision }).removed_count, 0);

  await staged.capture();
  t.equal(staged.state, 'captured');
  t.equal(registry.stats().capture_slot_busy, true, 'the slot stays held until publication');
  staged.publish();
  t.equal(staged.state, 'published');
  t.equal(registry.stats().capture_slot_busy, false);
  t.equal(await refusalOf(() => create('s2', toolResource('other'))), null, 'the next registration proceeds');
});

t.test('the slot is released on every path', async (t) => {
  const { registry, begin } = registryFixture(t);
  const payload = { expected_revision: null, resource: toolResource('lookup') };
  const free = () => registry.stats().capture_slot_busy === false;

  const discarded = begin('s1', payload);
  discarded.discard();
  discarded.discard();
  t.ok(free(), 'discard, twice harmless');
  t.equal(await messageOf(() => discarded.capture()), registryRefusals.stagingDiscarded().message);
  t.equal(await messageOf(() => discarded.publish()), registryRefusals.stagingDiscarded().message);

  const capturedThenDiscarded = begin('s1', payload);
  await capturedThenDiscarded.capture();
  capturedThenDiscarded.discard();
  t.ok(free(), 'discard after capture');
  t.same(registry.list('s1').entries, [], 'a discarded capture is never published');

  const refused = begin('s1', { expected_revision: null, resource: toolResource('bad', { content: '[]' }) });
  t.equal(await refusalOf(() => refused.capture()), 'invalid_payload');
  t.equal(refused.state, 'discarded');
  t.ok(free(), 'a refused capture');

  const lost = begin('s1', payload, () => false);
  await lost.capture();
  t.equal(await messageOf(() => lost.publish()), registryRefusals.authorityEnded().message);
  t.equal(lost.state, 'discarded');
  t.ok(free(), 'a failed guard');

  const expired = begin('s1', payload, () => {
    throw new WireError('stale_connection', 'the request deadline passed');
  });
  await expired.capture();
  t.equal(
    await messageOf(() => expired.publish()),
    'the request deadline passed',
    'the guard may refuse in its own words',
  );
  t.ok(free(), 'a throwing guard');

  const early = begin('s1', payload);
  t.equal(await refusalOf(() => early.publish()), 'internal_error', 'publishing before capturing is a bug');
  t.ok(free(), 'misuse');

  const twice = begin('s1', payload);
  await twice.capture();
  twice.publish();
  t.equal(await refusalOf(() => twice.capture()), 'internal_error');
  t.equal(registry.list('s1').entries.length, 1, 'still published once');
  t.ok(free());
});

t.test('capacity and revision checks come before any capture', async (t) => {
  const { registry, begin, create } = registryFixture(t, { limits: { retained_entries: 1 } });
  await create('s1', toolResource('only'));
  t.equal(
    await messageOf(() =>
      begin('s1', { expected_revision: null, resource: fileResource('tool', 'absent', 'nowhere.json') }),
    ),
    registryRefusals.retainedEntries().message,
    'refused at admission, so the missing file is never looked for',
  );
  t.equal(
    await refusalOf(() =>
      begin('s1', { expected_revision: 'rev_stale', resource: fileResource('tool', 'only', 'nowhere.json') }),
    ),
    'conflict',
  );
  t.equal(registry.stats().capture_slot_busy, false);
});

t.test('the reservation must fit the daemon byte budget', async (t) => {
  const { registry, begin } = registryFixture(t, { limits: { retained_bytes: RESERVATION - 1 } });
  t.equal(
    await messageOf(() => begin('s1', { expected_revision: null, resource: skillResource('a') })),
    registryRefusals.retainedBytes().message,
  );
  t.equal(registry.stats().capture_slot_busy, false);
});

t.test('a change of control discards the staged capture', async (t) => {
  const { registry, begin } = registryFixture(t);
  const payload = { expected_revision: null, resource: toolResource('lookup') };

  const ended = begin('s1', payload);
  await ended.capture();
  registry.controlEnded('s2');
  t.equal(ended.state, 'captured', 'another session ending control changes nothing');
  registry.controlEnded('s1');
  t.equal(ended.state, 'discarded', 'disconnect or release');
  t.equal(await refusalOf(() => ended.publish()), 'stale_connection');

  registry.controlStarted('s1');
  const takenOver = begin('s1', payload);
  registry.controlStarted('s1');
  t.equal(takenOver.state, 'discarded', 'takeover');
  t.equal(await refusalOf(() => takenOver.capture()), 'stale_connection');
  t.equal(registry.stats().capture_slot_busy, false);
  t.same(registry.list('s1').entries, []);
});

t.test('publication rechecks the resource revision', async (t) => {
  const { registry, begin, create } = registryFixture(t);
  const first = await create('s1', toolResource('lookup'));

  const replacement = begin('s1', {
    expected_revision: first.entry.revision_id,
    resource: toolResource('lookup'),
  });
  await replacement.capture();
  registry.unregister('s1', {
    resource_id: first.entry.resource_id,
    expected_revision: first.entry.revision_id,
  });
  t.equal(
    await messageOf(() => replacement.publish()),
    registryRefusals.staleRevision().message,
    'unregistered meanwhile',
  );

  const again = await create('s1', toolResource('lookup'));
  const cleared = begin('s1', {
    expected_revision: again.entry.revision_id,
    resource: toolResource('lookup'),
  });
  await cleared.capture();
  registry.clear('s1', { expected_registry_revision: again.registry_revision });
  t.equal(await refusalOf(() => cleared.publish()), 'conflict', 'cleared meanwhile');

  const creation = begin('s1', { expected_revision: null, resource: skillResource('style') });
  await creation.capture();
  const listed = registry.list('s1').registry_revision;
  registry.clear('s1', { expected_registry_revision: listed });
  t.equal(await refusalOf(() => creation.publish()), null, 'a creation survives unrelated changes');
  t.equal(registry.stats().capture_slot_busy, false);
});

t.test('publication rechecks the budgets against what changed meanwhile', async (t) => {
  // With the profile's reservation a staged revision always fits in its slot's place; a small reservation
  // lets growth during staging outrun it. Charges: base ≈ 2,000 + descriptor (~450), the pin's 1,000
  // instruction bytes, next ≈ 600 + descriptor.
  const limits = { capture_reservation_bytes: 512, retained_bytes: 4_200 };
  const { registry, begin, create } = registryFixture(t, { limits });
  await create('s1', skillResource('base', { content: 'x'.repeat(1_000) }));
  const staged = begin('s1', {
    expected_revision: null,
    resource: skillResource('next', { content: 'y'.repeat(300) }),
  });
  await staged.capture();
  const pin = registry.snapshot('s1');
  t.ok(pin, 'a turn pinned the registry, charging its combined instructions');
  t.equal(await messageOf(() => staged.publish()), registryRefusals.retainedBytes().message);
  t.equal(registry.list('s1').entries.length, 1, 'nothing was evicted');
  pin?.release();
  t.equal(await refusalOf(() => create('s1', skillResource('next', { content: 'y'.repeat(300) }))), null);
});

t.test('workspace files are captured once, through the safe walk', async (t) => {
  const { registry, workspace, stateDirectory, create } = registryFixture(t);
  mkdirSync(join(workspace, 'tools'));
  writeFileSync(join(workspace, 'tools', 'lookup.json'), TOOL_CONTRACT);
  writeFileSync(join(workspace, 'style.md'), 'Write plainly.\n');

  const tool = await create('s1', fileResource('tool', 'lookup', 'tools/lookup.json'));
  const skill = await create('s1', fileResource('skill', 'style', 'style.md'));
  t.equal(tool.entry.content_sha256, contentSha256(Buffer.from(TOOL_CONTRACT)));
  t.equal(skill.entry.captured_bytes, 'Write plainly.\n'.length);
  t.notMatch(JSON.stringify(registry.list('s1')), /lookup\.json|style\.md|tools\//, 'no path in descriptors');

  writeFileSync(join(workspace, 'style.md'), 'Changed afterwards.\n');
  rmSync(join(workspace, 'tools'), { recursive: true });
  const pin = registry.snapshot('s1');
  t.equal(pin?.snapshot.instructions, 'Write plainly.\n', 'the captured text, not the file');
  t.same(pin?.snapshot.tools[0]?.contract, JSON.parse(TOOL_CONTRACT), 'the captured contract');
  pin?.release();

  symlinkSync(join(workspace, 'style.md'), join(workspace, 'link.md'));
  t.equal(
    await messageOf(() => create('s1', fileResource('skill', 'linked', 'link.md'))),
    CAPTURE_REFUSALS.symlink,
  );
  writeFileSync(join(stateDirectory, 'state.md'), 'daemon state');
  t.equal(
    await messageOf(() => create('s1', fileResource('skill', 'state', '.magi-state/state.md'))),
    CAPTURE_REFUSALS.excluded_directory,
  );
  t.equal(
    await messageOf(() => create('s1', fileResource('skill', 'gone', 'gone.md'))),
    CAPTURE_REFUSALS.not_found,
  );
  writeFileSync(join(workspace, 'big.md'), 'z'.repeat(PROFILE_LIMITS.skill_source_bytes + 1));
  t.equal(
    await messageOf(() => create('s1', fileResource('skill', 'big', 'big.md'))),
    CAPTURE_REFUSALS.too_large,
  );
  t.equal(registry.stats().capture_slot_busy, false, 'every refusal released the slot');
  t.equal(registry.list('s1').entries.length, 2);
});

t.test('a session whose workspace cannot be resolved takes no slot', async (t) => {
  const registry = new ResourceRegistry({
    clock: fakeClock(),
    catalog: () => new NameCatalog(),
    workspaceOf: () => {
      throw new WireError('unknown_session');
    },
    excludedDirectories: [],
    reader: unusedReader,
  });
  const payload = { expected_revision: null, resource: fileResource('skill', 'style', 'style.md') };
  t.equal(
    await refusalOf(() => registry.beginRegistration('s1', payload, attribution(), () => true)),
    'unknown_session',
  );
  t.equal(registry.stats().capture_slot_busy, false);
  const inline = registry.beginRegistration(
    's1',
    { expected_revision: null, resource: skillResource('inline') },
    attribution(),
    () => true,
  );
  t.equal(inline.state, 'staged', 'inline sources need no workspace');
  inline.discard();
});

/** A reader that hands over `text` at once and confirms it when the test says so. */
function confirmingReader(text: string) {
  let confirm!: (hashes: DescriptorHashes) => void;
  let refuse!: (error: WireError) => void;
  const confirmed = new Promise<DescriptorHashes>((resolve, reject) => {
    confirm = resolve;
    refuse = reject;
  });
  const reader: WorkspaceReader = {
    read: async () => ({ bytes: Buffer.from(text), text, confirmed }),
    close: async () => true,
  };
  return { reader, confirm, refuse };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

t.test('the content rules run before the read is confirmed, and the confirmation decides', async (t) => {
  const cases = [
    {
      name: 'a refusal of the capture outranks the content rules',
      settle: (held: ReturnType<typeof confirmingReader>) =>
        held.refuse(new WireError('invalid_payload', CAPTURE_REFUSALS.excluded_directory)),
      message: CAPTURE_REFUSALS.excluded_directory,
    },
    {
      name: 'content refused is refused once the capture is confirmed',
      settle: (held: ReturnType<typeof confirmingReader>) =>
        held.confirm({ contentSha256: 'a'.repeat(64), revisionSha256: 'b'.repeat(64) }),
      message: 'the tool contract is not valid JSON',
    },
  ];
  for (const { name, settle, message } of cases) {
    t.test(name, async (t) => {
      const held = confirmingReader('not a contract');
      const { begin, registry } = registryFixture(t, { reader: held.reader });
      const staged = begin('s1', {
        expected_revision: null,
        resource: fileResource('tool', 'lookup', 'x.json'),
      });
      const captured = staged.capture();
      await settled();
      t.equal(registry.stats().capture_slot_busy, true, 'the slot waits for the confirmation');
      settle(held);
      t.equal(await messageOf(() => captured), message);
      t.equal(registry.stats().capture_slot_busy, false);
    });
  }

  t.test("the descriptor carries the reader's hashes", async (t) => {
    const { reader, confirm } = confirmingReader(TOOL_CONTRACT);
    const { register } = registryFixture(t, { reader });
    confirm({ contentSha256: 'c'.repeat(64), revisionSha256: 'd'.repeat(64) });
    const { entry } = await register('s1', {
      expected_revision: null,
      resource: fileResource('tool', 'lookup', 'x.json'),
    });
    t.equal(entry.content_sha256, 'c'.repeat(64));
    t.equal(entry.revision_sha256, 'd'.repeat(64));
  });
});

t.test('the capture worker hashes what it read as the descriptor hashes say', async (t) => {
  const { workspace, create } = registryFixture(t);
  writeFileSync(join(workspace, 'lookup.json'), TOOL_CONTRACT);
  const resource = fileResource('tool', 'lookup', 'lookup.json');
  const { entry } = await create('s1', resource);
  const captured = Buffer.from(TOOL_CONTRACT);
  t.equal(entry.content_sha256, contentSha256(captured));
  t.equal(
    entry.revision_sha256,
    revisionSha256({ kind: 'tool', name: 'lookup', description: resource.description, captured }),
  );
});
