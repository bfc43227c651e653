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
  takeOver,
  toolResource,
} from './session.resources.fixture.js';

interface Cleared {
  registry_revision: string;
  removed_count: number;
}

for (const transport of TRANSPORTS) {
  t.test(`session.resources.clear (${transport})`, async (t) => {
    t.test('removes every resource and allocates a fresh revision', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      await registered(who, toolResource('lookup'));
      await registered(who, skillResource('style'));
      const before = await listed(who);
      const cleared = resultOf<Cleared>(await registryOf(who).clear(before.registry_revision));
      t.same(Object.keys(cleared).sort(), ['registry_revision', 'removed_count']);
      t.equal(cleared.removed_count, 2);
      t.not(cleared.registry_revision, before.registry_revision);
      t.same(await listed(who), { registry_revision: cleared.registry_revision, entries: [] });
    });

    t.test('clearing an already-empty registry keeps its revision', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const empty = await listed(who);
      const cleared = resultOf<Cleared>(await registryOf(who).clear(empty.registry_revision));
      t.same(cleared, { registry_revision: empty.registry_revision, removed_count: 0 });
      const again = resultOf<Cleared>(await registryOf(who).clear(empty.registry_revision));
      t.same(again, cleared, 'and again');
    });

    t.test('a stale registry revision is a conflict', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const registry = registryOf(who);
      t.equal(codeOf(await registry.clear('reg_none')), 'conflict', 'no registry yet');
      t.notOk(daemon.app.resources.has(who.session), 'a refusal creates no registry');
      const empty = await listed(who);
      await registered(who, toolResource('lookup'));
      t.equal(codeOf(await registry.clear(empty.registry_revision)), 'conflict');
      t.equal((await listed(who)).entries.length, 1, 'nothing was removed');
      t.equal(codeOf(await registry.clear('has space')), 'invalid_payload');
    });

    t.test('a cleared registry keeps its revision until unclaimed, then goes', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      await registered(who, toolResource('lookup'));
      const cleared = resultOf<Cleared>(await registryOf(who).clear((await listed(who)).registry_revision));
      t.equal((await listed(who)).registry_revision, cleared.registry_revision);
      await who.client.call(
        'session.release',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      t.notOk(daemon.app.resources.has(who.session));
      const next = await listed(await takeOver(daemon, transport, who));
      t.not(next.registry_revision, cleared.registry_revision);
    });
  });
}
