import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isWireId } from '../../core/ids.js';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  codeOf,
  controller,
  DESCRIPTOR_MEMBERS,
  everythingReceived,
  FIFTEEN_MINUTES,
  fileResource,
  listed,
  registered,
  registryOf,
  resultOf,
  skillResource,
  takeOver,
  toolResource,
} from './session.resources.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`session.resources.list (${transport})`, async (t) => {
    t.test('the first list creates an empty registry with an unpredictable revision', async (t) => {
      const daemon = await startDaemon(t);
      const first = await controller(daemon, transport);
      const second = await controller(daemon, transport);
      t.notOk(daemon.app.resources.has(first.session), 'no registry before the first list');

      const listing = await listed(first);
      t.same(listing.entries, []);
      t.ok(isWireId(listing.registry_revision), 'the revision is a wire id');
      t.ok(daemon.app.resources.has(first.session));
      t.same(await listed(first), listing, 'listing again changes nothing');

      const other = await listed(second);
      t.not(other.registry_revision, listing.registry_revision, 'each registry has its own revision');
      t.ok(listing.registry_revision.length >= 20, 'long enough not to be guessed');
    });

    t.test('entries are sorted by kind then name, without bodies or paths', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      mkdirSync(join(daemon.workspace, 'guides'));
      const body = 'Describe the secret-free house style in full sentences.';
      writeFileSync(join(daemon.workspace, 'guides', 'house_style.md'), body);
      const inlineBody = 'Answer in short numbered steps.';
      await registered(who, toolResource('zeta_tool'));
      await registered(who, skillResource('steps', { content: inlineBody }));
      await registered(who, toolResource('alpha_tool'));
      await registered(who, fileResource('skill', 'house_style', 'guides/house_style.md'));

      const listing = await listed(who);
      t.same(
        listing.entries.map((entry) => [entry.kind, entry.name]),
        [
          ['skill', 'house_style'],
          ['skill', 'steps'],
          ['tool', 'alpha_tool'],
          ['tool', 'zeta_tool'],
        ],
      );
      for (const entry of listing.entries) {
        t.same(Object.keys(entry).sort(), DESCRIPTOR_MEMBERS, `${entry.name} is exactly a descriptor`);
      }
      const received = everythingReceived(who.client);
      t.notOk(received.includes('guides/house_style.md'), 'no path');
      t.notOk(received.includes('house_style.md'), 'not even the file name');
      t.notOk(received.includes(body), 'no workspace body');
      t.notOk(received.includes(inlineBody), 'no inline body');
      t.notOk(received.includes('input_schema'), 'no tool contract');
    });

    t.test('every change allocates a fresh registry revision; a list does not', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const registry = registryOf(who);
      const seen = new Set<string>();
      const remember = (revision: string) => {
        t.notOk(seen.has(revision), 'a revision never repeats');
        seen.add(revision);
      };
      remember((await listed(who)).registry_revision);
      const created = await registered(who, toolResource('lookup'));
      remember(created.registry_revision);
      t.equal((await listed(who)).registry_revision, created.registry_revision);
      const replaced = await registered(who, toolResource('lookup'), created.entry.revision_id);
      remember(replaced.registry_revision);
      const removed = resultOf<{ registry_revision: string }>(
        await registry.unregister(replaced.entry.resource_id, replaced.entry.revision_id),
      );
      remember(removed.registry_revision);
      await registered(who, skillResource('style'));
      const cleared = resultOf<{ registry_revision: string }>(
        await registry.clear((await listed(who)).registry_revision),
      );
      remember(cleared.registry_revision);
      t.equal((await listed(who)).registry_revision, cleared.registry_revision);
    });

    t.test('an empty registry stays while claimed and goes when unclaimed', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const first = await listed(who);
      daemon.clock.advance(FIFTEEN_MINUTES * 3);
      t.same(await listed(who), first, 'a claimed empty registry never expires');

      await who.client.call(
        'session.release',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      t.notOk(daemon.app.resources.has(who.session), 'removed as soon as unclaimed');
      const listing = await listed(await takeOver(daemon, transport, who));
      t.same(listing.entries, []);
      t.not(listing.registry_revision, first.registry_revision, 'a new registry, a new revision');
    });

    t.test('list is a read: its operation id must be null and its payload empty', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const withOperation = await who.client.request(
        'session.resources.list',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      t.equal(codeOf(withOperation), 'invalid_request');
      const extra = await who.client.request(
        'session.resources.list',
        { cursor: null },
        { session: who.session, control: who.control },
      );
      t.equal(codeOf(extra), 'invalid_payload');
      t.notOk(daemon.app.resources.has(who.session), 'neither reached the registry');
    });
  });
}
