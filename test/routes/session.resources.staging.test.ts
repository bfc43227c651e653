import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isWireError } from '../../core/errors.js';
import type { StagedRegistration } from '../../core/registry/staged-registration.js';
import { op, startDaemon, type TestDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { HeldReader } from '../helpers/held-reader.js';
import {
  type Controller,
  codeOf,
  controller,
  fileResource,
  listed,
  type Registered,
  registered,
  registryOf,
  resultOf,
  skillResource,
  takeOver,
  toolResource,
  until,
} from './session.resources.fixture.js';

/** Takes the daemon's capture slot for `who` directly, as a registration that has not been captured yet. */
function holdSlot(daemon: TestDaemon, who: Controller, resource: unknown, expected: string | null = null) {
  return daemon.app.resources.beginRegistration(
    who.session,
    { expected_revision: expected, resource },
    {
      instance_id: who.instanceId,
      connection_id: who.connectionId,
      operation_id: op(),
      grant_generation: who.generation,
    },
    () => true,
  );
}

async function refusalOf(fn: () => unknown): Promise<string> {
  try {
    await fn();
    return 'ok';
  } catch (error) {
    if (isWireError(error)) return error.code;
    throw error;
  }
}

function slotBusy(daemon: TestDaemon): boolean {
  return daemon.app.resources.stats().capture_slot_busy;
}

/** A request line, so several can be written at once and are read together. */
function frame(
  who: Controller,
  id: string,
  method: string,
  payload: unknown,
  operation: string | null,
  control: string | null = who.control,
) {
  return `${JSON.stringify({
    type: 'request',
    id,
    method,
    session_id: who.session,
    control_token: control,
    operation_id: operation,
    payload,
  })}\n`;
}

for (const transport of TRANSPORTS) {
  t.test(`one capture slot (${transport})`, async (t) => {
    t.test('a registration read while another is being captured is configuration_busy', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const busyOperation = op();
      who.client.sendRaw(
        frame(
          who,
          'first',
          'session.resources.register',
          { expected_revision: null, resource: toolResource('a') },
          op(),
        ) +
          frame(
            who,
            'second',
            'session.resources.register',
            { expected_revision: null, resource: toolResource('b') },
            busyOperation,
          ),
      );
      const first = await who.client.response('first');
      const second = await who.client.response('second');
      t.equal(codeOf(first), 'ok');
      t.equal(codeOf(second), 'configuration_busy');
      t.equal(second.error?.message, 'the capture worker is busy with another registration');
      t.same(
        (await listed(who)).entries.map((entry) => entry.name),
        ['a'],
      );
      t.equal(daemon.app.operations.lookup(busyOperation)?.status, 'failed', 'the busy operation is settled');
      t.notOk(slotBusy(daemon), 'the slot is free again');
    });

    t.test(
      'while a capture waits on the filesystem, list, unregister and clear stay available',
      async (t) => {
        const reader = new HeldReader();
        const daemon = await startDaemon(t, { workspaceReader: reader });
        writeFileSync(join(daemon.workspace, 'style.md'), 'Be brief.');
        const holder = await controller(daemon, transport);
        const who = await controller(daemon, transport);
        const kept = await registered(who, toolResource('kept'));
        const capturing = registryOf(holder).register(fileResource('skill', 'style', 'style.md'));
        await reader.waitForRead();
        t.ok(slotBusy(daemon), 'the capture holds the slot');

        const registry = registryOf(who);
        t.equal(
          codeOf(await registry.register(toolResource('other'))),
          'configuration_busy',
          'another session',
        );
        t.equal(
          codeOf(await registryOf(holder).register(toolResource('other'))),
          'configuration_busy',
          'the same one',
        );
        t.equal(
          codeOf(await registry.register(toolResource('read_file'))),
          'configuration_busy',
          'busy is decided before the name',
        );
        t.equal((await listed(who)).entries.length, 1, 'list');
        const removed = resultOf<{ registry_revision: string }>(
          await registry.unregister(kept.entry.resource_id, kept.entry.revision_id),
        );
        t.equal(codeOf(await registry.clear(removed.registry_revision)), 'ok', 'clear');
        t.equal(reader.inFlight, 1, 'all of it answered while the read was still held');

        await reader.release();
        const published = resultOf<Registered>(await capturing);
        t.equal(published.entry.name, 'style');
        t.notOk(slotBusy(daemon));
        t.equal(
          codeOf(await registry.register(toolResource('other'))),
          'ok',
          'the next registration proceeds',
        );
        t.same(
          (await listed(holder)).entries.map((entry) => entry.name),
          ['style'],
        );
      },
    );

    t.test('a takeover discards the staged capture of the previous controller', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const staged = holdSlot(daemon, who, toolResource('lookup'));
      const taken = await takeOver(daemon, transport, who);
      t.equal(staged.state, 'discarded');
      t.notOk(slotBusy(daemon), 'the slot is released');
      t.equal(await refusalOf(() => staged.capture()), 'stale_connection');
      t.equal(await refusalOf(() => staged.publish()), 'stale_connection');
      t.same((await listed(taken)).entries, [], 'nothing was published');
      t.equal(codeOf(await registryOf(taken).register(toolResource('lookup'))), 'ok');
    });

    t.test('a disconnect discards the staged capture', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const staged = holdSlot(daemon, who, toolResource('lookup'));
      await staged.capture();
      who.client.close();
      await until(() => staged.state === 'discarded', 'the staging to be discarded');
      t.notOk(slotBusy(daemon));
      t.equal(await refusalOf(() => staged.publish()), 'stale_connection');
      t.same((await listed(await takeOver(daemon, transport, who))).entries, []);
    });

    t.test('a release discards the staged capture', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      await registered(who, skillResource('kept'));
      const staged: StagedRegistration = holdSlot(daemon, who, toolResource('lookup'));
      await who.client.call(
        'session.release',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      t.equal(staged.state, 'discarded');
      t.notOk(slotBusy(daemon));
    });

    t.test(
      'control ending between admission and capture: the registration is stale_connection',
      async (t) => {
        const daemon = await startDaemon(t);
        const who = await controller(daemon, transport);
        const registerOperation = op();
        who.client.sendRaw(
          frame(
            who,
            'register',
            'session.resources.register',
            { expected_revision: null, resource: toolResource('lookup') },
            registerOperation,
          ) + frame(who, 'release', 'session.release', {}, op()),
        );
        const register = await who.client.response('register');
        t.equal(codeOf(await who.client.response('release')), 'ok');
        t.equal(codeOf(register), 'stale_connection');
        t.equal(daemon.app.operations.lookup(registerOperation)?.status, 'failed');
        t.notOk(daemon.app.resources.has(who.session), 'nothing was published; the empty registry went');
        t.notOk(slotBusy(daemon));

        const again = await takeOver(daemon, transport, who);
        again.client.sendRaw(
          frame(
            again,
            'register',
            'session.resources.register',
            { expected_revision: null, resource: toolResource('lookup') },
            op(),
          ) + frame(again, 'reclaim', 'session.claim', {}, op(), null),
        );
        t.equal(
          codeOf(await again.client.response('register')),
          'stale_connection',
          'a new claim, even by the same connection',
        );
        t.equal(codeOf(await again.client.response('reclaim')), 'ok');
        t.notOk(slotBusy(daemon));
      },
    );

    t.test('publication rechecks the expected revision against changes made meanwhile', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const lookup = await registered(who, toolResource('lookup'));
      const replacing = holdSlot(daemon, who, toolResource('lookup'), lookup.entry.revision_id);
      resultOf(await registryOf(who).unregister(lookup.entry.resource_id, lookup.entry.revision_id));
      await replacing.capture();
      t.equal(await refusalOf(() => replacing.publish()), 'conflict', 'unregistered meanwhile');

      const style = await registered(who, skillResource('style'));
      const replacingStyle = holdSlot(daemon, who, skillResource('style'), style.entry.revision_id);
      resultOf(await registryOf(who).clear((await listed(who)).registry_revision));
      await replacingStyle.capture();
      t.equal(await refusalOf(() => replacingStyle.publish()), 'conflict', 'cleared meanwhile');

      const other = await registered(who, skillResource('other'));
      const creating = holdSlot(daemon, who, toolResource('lookup'));
      resultOf(await registryOf(who).unregister(other.entry.resource_id, other.entry.revision_id));
      await creating.capture();
      t.equal(
        await refusalOf(() => creating.publish()),
        'ok',
        'an unrelated change does not invalidate a creation',
      );
      t.same(
        (await listed(who)).entries.map((entry) => entry.name),
        ['lookup'],
      );
    });
  });
}
