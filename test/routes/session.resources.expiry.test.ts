import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  type Controller,
  controller,
  FIFTEEN_MINUTES,
  listed,
  registered,
  takeOver,
  toolResource,
  until,
} from './session.resources.fixture.js';

async function release(who: Controller): Promise<void> {
  await who.client.call(
    'session.release',
    {},
    { session: who.session, control: who.control, operation: op() },
  );
}

for (const transport of TRANSPORTS) {
  t.test(`registry idle expiry (${transport})`, async (t) => {
    t.test('an unclaimed registry expires exactly 900,000 ms after its release', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const lookup = await registered(who, toolResource('lookup'));
      await release(who);
      daemon.clock.advance(FIFTEEN_MINUTES - 1);
      t.ok(daemon.app.resources.has(who.session), 'still there at 899,999 ms');
      daemon.clock.advance(1);
      t.notOk(daemon.app.resources.has(who.session), 'gone at 900,000 ms');

      const again = await takeOver(daemon, transport, who);
      const listing = await listed(again);
      t.same(listing.entries, [], 'a claim afterwards finds a fresh empty registry');
      t.not(listing.registry_revision, lookup.registry_revision);
      const recreated = await registered(again, toolResource('lookup'));
      t.not(recreated.entry.resource_id, lookup.entry.resource_id, 'nothing of the old registry survives');
    });

    t.test('a reclaim before the deadline keeps the registry and resets the timer', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const lookup = await registered(who, toolResource('lookup'));
      await release(who);
      daemon.clock.advance(FIFTEEN_MINUTES - 1);
      const again = await takeOver(daemon, transport, who);
      t.same((await listed(again)).entries, [lookup.entry], 'reclaimed at 899,999 ms with its content');
      t.equal((await listed(again)).registry_revision, lookup.registry_revision, 'and its revision');

      daemon.clock.advance(FIFTEEN_MINUTES * 2);
      t.ok(daemon.app.resources.has(who.session), 'a claimed registry does not expire');
      await release(again);
      daemon.clock.advance(FIFTEEN_MINUTES - 1);
      t.ok(daemon.app.resources.has(who.session), 'the timer restarted at the second release');
      daemon.clock.advance(1);
      t.notOk(daemon.app.resources.has(who.session));
    });

    t.test('a disconnect unclaims: the timer starts when the controller goes', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      await registered(who, toolResource('lookup'));
      who.client.close();
      await until(() => !daemon.app.sessions.isClaimed(who.session), 'control to end');
      daemon.clock.advance(FIFTEEN_MINUTES - 1);
      t.ok(daemon.app.resources.has(who.session));
      daemon.clock.advance(1);
      t.notOk(daemon.app.resources.has(who.session));
    });

    t.test('a takeover is no release: the registry stays claimed throughout', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const lookup = await registered(who, toolResource('lookup'));
      const taken = await takeOver(daemon, transport, who);
      daemon.clock.advance(FIFTEEN_MINUTES * 2);
      t.same((await listed(taken)).entries, [lookup.entry]);
    });
  });
}
