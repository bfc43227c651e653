import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  codeOf,
  controller,
  listed,
  registered,
  registryOf,
  resultOf,
  skillResource,
  toolResource,
} from './session.resources.fixture.js';

interface Unregistered {
  resource_id: string;
  removed_revision: string;
  registry_revision: string;
}

for (const transport of TRANSPORTS) {
  t.test(`session.resources.unregister (${transport})`, async (t) => {
    t.test('removes a resource by its id and current revision', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const lookup = await registered(who, toolResource('lookup'));
      const style = await registered(who, skillResource('style'));
      const removed = resultOf<Unregistered>(
        await registryOf(who).unregister(lookup.entry.resource_id, lookup.entry.revision_id),
      );
      t.same(Object.keys(removed).sort(), ['registry_revision', 'removed_revision', 'resource_id']);
      t.equal(removed.resource_id, lookup.entry.resource_id);
      t.equal(removed.removed_revision, lookup.entry.revision_id);
      t.not(removed.registry_revision, style.registry_revision, 'a fresh registry revision');
      const listing = await listed(who);
      t.equal(listing.registry_revision, removed.registry_revision);
      t.same(
        listing.entries.map((entry) => entry.name),
        ['style'],
      );
    });

    t.test('a stale revision is a conflict and removes nothing', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const first = await registered(who, toolResource('lookup'));
      const second = await registered(who, toolResource('lookup'), first.entry.revision_id);
      const other = await registered(who, skillResource('style'));
      const registry = registryOf(who);
      t.equal(
        codeOf(await registry.unregister(first.entry.resource_id, first.entry.revision_id)),
        'conflict',
      );
      t.equal(
        codeOf(await registry.unregister(first.entry.resource_id, other.entry.revision_id)),
        'conflict',
      );
      t.equal(
        codeOf(await registry.unregister(first.entry.resource_id, other.registry_revision)),
        'conflict',
        'the expected revision is the resource revision, not the registry revision',
      );
      t.equal((await listed(who)).entries.length, 2);
      t.equal(codeOf(await registry.unregister(second.entry.resource_id, second.entry.revision_id)), 'ok');
    });

    t.test('an absent resource id is resource_not_found', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const elsewhere = await controller(daemon, transport);
      const registry = registryOf(who);
      t.equal(codeOf(await registry.unregister('res_missing', 'rev_missing')), 'resource_not_found');
      t.notOk(daemon.app.resources.has(who.session), 'a refusal creates no registry');

      const foreign = await registered(elsewhere, toolResource('lookup'));
      await registered(who, toolResource('lookup'));
      t.equal(
        codeOf(await registry.unregister(foreign.entry.resource_id, foreign.entry.revision_id)),
        'resource_not_found',
        'another session’s resource is not found here',
      );
      t.equal((await listed(elsewhere)).entries.length, 1, 'and stays registered there');

      const mine = (await listed(who)).entries[0]!;
      await registry.unregister(mine.resource_id, mine.revision_id);
      t.equal(
        codeOf(await registry.unregister(mine.resource_id, mine.revision_id)),
        'resource_not_found',
        'removed once',
      );
    });

    t.test('recreation receives a new resource id', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const first = await registered(who, toolResource('lookup'));
      await registryOf(who).unregister(first.entry.resource_id, first.entry.revision_id);
      const again = await registered(who, toolResource('lookup'));
      t.not(again.entry.resource_id, first.entry.resource_id);
      t.not(again.entry.revision_id, first.entry.revision_id);
    });

    t.test('removing the last resource keeps the claimed, empty registry', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const only = await registered(who, toolResource('lookup'));
      const removed = resultOf<Unregistered>(
        await registryOf(who).unregister(only.entry.resource_id, only.entry.revision_id),
      );
      t.ok(daemon.app.resources.has(who.session));
      t.same(await listed(who), { registry_revision: removed.registry_revision, entries: [] });
    });

    t.test('the payload is exactly {resource_id, expected_revision} with ids', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const only = await registered(who, toolResource('lookup'));
      const envelope = { session: who.session, control: who.control, operation: op() };
      const payloads: Array<Record<string, unknown>> = [
        { resource_id: only.entry.resource_id },
        { resource_id: only.entry.resource_id, expected_revision: only.entry.revision_id, extra: 1 },
        { resource_id: only.entry.resource_id, expected_revision: null },
        { resource_id: 'has space', expected_revision: only.entry.revision_id },
      ];
      for (const payload of payloads) {
        const response = await who.client.request('session.resources.unregister', payload, {
          ...envelope,
          operation: op(),
        });
        t.equal(codeOf(response), 'invalid_payload', JSON.stringify(Object.keys(payload)));
      }
      t.equal((await listed(who)).entries.length, 1);
    });
  });
}
