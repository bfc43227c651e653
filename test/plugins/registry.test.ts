import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import t from 'tap';
import { isWireError } from '../../core/errors.js';
import { SERVICE_LIMITS } from '../../core/limits.js';
import type { StagedRegistration } from '../../core/registry/staged-registration.js';

const REGISTRATION_DEADLINE_MS = SERVICE_LIMITS.registration_deadline_ms;

import { op, startDaemon, TRANSPORTS, type Transport } from '../helpers/daemon.js';
import { HeldReader } from '../helpers/held-reader.js';
import {
  type Controller,
  controller,
  FIFTEEN_MINUTES,
  fileResource,
  listed,
  registered,
  registryOf,
  TOOL_CONTRACT,
  toolResource,
  until,
} from '../routes/session.resources.fixture.js';

/**
 * A test-only wire method, `test.stage`, that admits a registration exactly as `session.resources.register`
 * does and stays in flight with it, so the test decides when to capture and publish.
 */
function stagingRoute() {
  const staged: StagedRegistration[] = [];
  let releaseRequest: () => void = () => {};
  const released = new Promise<void>((resolve) => (releaseRequest = resolve));
  return {
    staged,
    release: () => releaseRequest(),
    setup: async (app: FastifyInstance) => {
      app.post(
        '/test.stage',
        {
          config: {
            wire: { session: 'required', control: 'required', operation: 'required', profile: true },
          },
        },
        async (request) => {
          staged.push(app.stageRegistration(request.wire, request.body));
          await released;
          return { staged: true };
        },
      );
    },
  };
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

async function stagedDaemon(t: Parameters<typeof startDaemon>[0], transport: Transport) {
  const route = stagingRoute();
  const daemon = await startDaemon(t, { setup: route.setup });
  t.teardown(() => route.release());
  const who = await controller(daemon, transport);
  const stage = async (resource: unknown, operation = op()): Promise<StagedRegistration> => {
    const count = route.staged.length;
    who.client.send('test.stage', { expected_revision: null, resource } as Record<string, unknown>, {
      session: who.session,
      control: who.control,
      operation,
    });
    await until(() => route.staged.length > count, 'the registration to be staged');
    return route.staged[count]!;
  };
  return { daemon, who, stage, release: route.release };
}

async function release(who: Controller): Promise<void> {
  await who.client.call(
    'session.release',
    {},
    { session: who.session, control: who.control, operation: op() },
  );
}

for (const transport of TRANSPORTS) {
  t.test(`registry plugin (${transport})`, async (t) => {
    t.test('a staged registration is attributed to the request that admitted it', async (t) => {
      const { daemon, who, stage } = await stagedDaemon(t, transport);
      const operation = op();
      const staged = await stage(toolResource('lookup'), operation);
      await staged.capture();
      const { entry } = staged.publish();
      t.same(entry.registered_by, {
        instance_id: daemon.app.instanceId,
        connection_id: who.connectionId,
        operation_id: operation,
        grant_generation: who.generation,
      });
      t.equal(who.instanceId, daemon.app.instanceId);
    });

    t.test(`publication is refused ${REGISTRATION_DEADLINE_MS} ms after admission`, async (t) => {
      const { daemon, who, stage } = await stagedDaemon(t, transport);
      const inTime = await stage(toolResource('in_time'));
      daemon.clock.advance(REGISTRATION_DEADLINE_MS - 1);
      await inTime.capture();
      t.equal(
        await refusalOf(() => inTime.publish()),
        'ok',
        `published at ${REGISTRATION_DEADLINE_MS - 1} ms`,
      );

      const late = await stage(toolResource('late'));
      daemon.clock.advance(REGISTRATION_DEADLINE_MS);
      t.equal(
        await refusalOf(() => late.capture()),
        'stale_connection',
        `discarded at ${REGISTRATION_DEADLINE_MS} ms`,
      );
      t.equal(late.state, 'discarded');
      t.notOk(daemon.app.resources.stats().capture_slot_busy, 'the slot is released');
      t.same(
        (await listed(who)).entries.map((entry) => entry.name),
        ['in_time'],
      );
    });

    t.test('publication needs the operation still accepted', async (t) => {
      const { daemon, who, stage } = await stagedDaemon(t, transport);
      const operation = op();
      const staged = await stage(toolResource('lookup'), operation);
      await staged.capture();
      daemon.app.operations.settle(operation, {
        ok: false,
        error: { code: 'internal_error', message: 'settled' },
      });
      t.equal(await refusalOf(() => staged.publish()), 'stale_connection');
      t.same((await listed(who)).entries, []);
    });

    t.test(
      'a disconnect while the worker reads discards the capture; the slot waits for the read',
      async (t) => {
        const reader = new HeldReader();
        const daemon = await startDaemon(t, { workspaceReader: reader });
        writeFileSync(join(daemon.workspace, 'lookup.json'), TOOL_CONTRACT);
        const who = await controller(daemon, transport);
        const operation = op();
        const answered = registryOf(who)
          .register(fileResource('tool', 'lookup', 'lookup.json'), null, operation)
          .catch(() => null);
        await reader.waitForRead();
        who.client.close();
        await until(() => daemon.app.operations.lookup(operation)?.status === 'failed', 'the refusal');
        t.equal(daemon.app.operations.lookup(operation)?.error?.code, 'stale_connection');
        t.equal(reader.inFlight, 1, 'refused while the read was still held');
        t.ok(daemon.app.resources.stats().capture_slot_busy, 'the slot stays charged until the read returns');
        await reader.release();
        await answered;
        t.notOk(daemon.app.resources.stats().capture_slot_busy, 'and is free once it returned');
        t.notOk(daemon.app.resources.has(who.session), 'nothing was published');
      },
    );

    t.test('registries never hold the idle stop', async (t) => {
      const stops: number[] = [];
      const daemon = await startDaemon(t, {
        idleTimeoutMs: 1_000,
        onIdle: () => stops.push(daemon.clock.now()),
      });
      const who = await controller(daemon, transport);
      await registered(who, toolResource('lookup'));
      await release(who);
      const stoppedAt = daemon.clock.now();
      who.client.close();
      await until(() => daemon.app.framing.connections.size === 0, 'the connection to close');
      t.ok(daemon.app.resources.has(who.session), 'the unclaimed registry is waiting for its expiry');
      daemon.clock.advance(1_000);
      t.equal(stops.length, 1, 'the daemon idled out with a registry present');
      t.ok(stops[0]! >= stoppedAt + 1_000);
    });

    t.test('closing the daemon discards staging and stops the idle timers', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      await registered(who, toolResource('lookup'));
      await release(who);
      // Staged for a session no connection controls, so only the daemon's close can discard it.
      const staged = daemon.app.resources.beginRegistration(
        'ses_uncontrolled',
        { expected_revision: null, resource: toolResource('other') },
        { instance_id: 'inst', connection_id: 'conn', operation_id: op(), grant_generation: 1 },
        () => true,
      );
      await daemon.app.close();
      t.equal(staged.state, 'discarded');
      daemon.clock.advance(FIFTEEN_MINUTES);
      t.ok(daemon.app.resources.has(who.session), 'no expiry runs after the close');
    });
  });
}
