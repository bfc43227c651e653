import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SERVICE_LIMITS } from '../../core/limits.js';
import { op, startDaemon, type TestDaemon, TRANSPORTS, type Transport } from '../helpers/daemon.js';
import { HeldReader } from '../helpers/held-reader.js';
import {
  type Controller,
  codeOf,
  controller,
  fileResource,
  listed,
  type Registered,
  registryOf,
  resultOf,
  sha256Hex,
  TOOL_CONTRACT,
  takeOver,
  toolResource,
} from './session.resources.fixture.js';

/**
 * A workspace registration whose read the test holds, as a slow or hung filesystem would: everything else
 * goes on meanwhile, and what ends the registrant's authority answers the registration at once.
 */
async function capturing(t: Test, transport: Transport) {
  const reader = new HeldReader();
  const daemon = await startDaemon(t, { workspaceReader: reader });
  writeFileSync(join(daemon.workspace, 'lookup.json'), TOOL_CONTRACT);
  const who = await controller(daemon, transport);
  const registration = registryOf(who).register(fileResource('tool', 'lookup', 'lookup.json'));
  await reader.waitForRead();
  return { reader, daemon, who, registration };
}

function slotBusy(daemon: TestDaemon): boolean {
  return daemon.app.resources.stats().capture_slot_busy;
}

for (const transport of TRANSPORTS) {
  t.test(`the capture worker (${transport})`, async (t) => {
    t.test('every other request is answered while a read waits on the filesystem', async (t) => {
      const { reader, daemon, who, registration } = await capturing(t, transport);
      const other = await controller(daemon, transport);
      t.equal(codeOf(await other.client.request('status', {})), 'ok', 'status');
      const fresh = await daemon.open(transport);
      t.ok((await fresh.initialize()).connection_id, 'a new connection initializes');
      t.equal(codeOf(await registryOf(other).list()), 'ok', "another session's list");
      t.equal(
        codeOf(await registryOf(other).register(toolResource('other'))),
        'configuration_busy',
        'another registration is busy at once',
      );
      const executor = await other.client.request('executor.create', {}, { operation: op() });
      t.equal(codeOf(executor), 'ok', 'executor methods');
      const created = await fresh.call(
        'session.create',
        { workspace: daemon.workspace, title: null },
        { operation: op() },
      );
      const claimed = await fresh.request(
        'session.claim',
        {},
        { session: created.session_id as string, operation: op() },
      );
      t.equal(codeOf(claimed), 'ok', 'claims');
      t.equal(codeOf(await registryOf(who).list()), 'ok', "the registrant's own list");
      t.equal(reader.inFlight, 1, 'all of it while the read was still held');

      await reader.release();
      const { entry } = resultOf<Registered>(await registration);
      t.equal(entry.captured_bytes, Buffer.byteLength(TOOL_CONTRACT));
      t.equal(entry.content_sha256, sha256Hex(TOOL_CONTRACT));
      t.notOk(slotBusy(daemon));
    });

    const endings: Array<[string, (daemon: TestDaemon, who: Controller) => Promise<Controller | null>]> = [
      ['a takeover', (daemon, who) => takeOver(daemon, transport, who)],
      [
        'a release',
        async (_daemon, who) => {
          await who.client.call(
            'session.release',
            {},
            { session: who.session, control: who.control, operation: op() },
          );
          return null;
        },
      ],
      [
        'a close',
        async (_daemon, who) => {
          await who.client.call(
            'session.close',
            {},
            { session: who.session, control: who.control, operation: op() },
          );
          return null;
        },
      ],
      [
        'the registration deadline',
        async (daemon) => {
          daemon.clock.advance(SERVICE_LIMITS.registration_deadline_ms);
          return null;
        },
      ],
    ];
    for (const [ending, end] of endings) {
      t.test(
        `${ending} during the read refuses the registration at once; the slot waits for the read`,
        async (t) => {
          const { reader, daemon, who, registration } = await capturing(t, transport);
          const successor = await end(daemon, who);
          const answer = await registration;
          t.equal(codeOf(answer), 'stale_connection', 'answered with the refusal, never ok');
          t.equal(reader.inFlight, 1, 'while the read was still held');
          t.ok(slotBusy(daemon), 'the slot stays charged');
          const next = successor ?? (await takeOver(daemon, transport, who));
          t.equal(codeOf(await registryOf(next).register(toolResource('other'))), 'configuration_busy');

          await reader.release();
          t.notOk(slotBusy(daemon), 'the slot is free once the read returned');
          t.same((await listed(next)).entries, [], 'nothing was published');
          t.equal(codeOf(await registryOf(next).register(toolResource('other'))), 'ok');
        },
      );
    }
  });
}
