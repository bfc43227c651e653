import t from 'tap';
import type { Envelope, WireClient } from '../../client/wire-client.js';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { confirmedExecutor } from './executor.fixture.js';
import {
  claim,
  codeOf,
  controller,
  listed,
  registered,
  registryOf,
  takeOver,
  toolResource,
} from './session.resources.fixture.js';

const METHODS = [
  'session.resources.list',
  'session.resources.register',
  'session.resources.unregister',
  'session.resources.clear',
] as const;

type Method = (typeof METHODS)[number];

/** A well-formed payload for each method, so only the envelope decides. */
const PAYLOADS: Record<Method, Record<string, unknown>> = {
  'session.resources.list': {},
  'session.resources.register': { expected_revision: null, resource: toolResource('lookup') },
  'session.resources.unregister': { resource_id: 'res_x', expected_revision: 'rev_x' },
  'session.resources.clear': { expected_registry_revision: 'reg_x' },
};

/** Calls `method` on `client` with the session and token given, and the operation id the method needs. */
async function attempt(
  client: WireClient,
  method: Method,
  session: string | null,
  control: string | null,
): Promise<string> {
  const envelope: Envelope = {
    session,
    control,
    operation: method === 'session.resources.list' ? null : op(),
  };
  return codeOf(await client.request(method, PAYLOADS[method], envelope));
}

for (const transport of TRANSPORTS) {
  t.test(`registry authorization (${transport})`, async (t) => {
    t.test('every method needs the session id and a control token in its envelope', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      for (const method of METHODS) {
        t.equal(
          await attempt(who.client, method, who.session, null),
          'invalid_request',
          `${method} without token`,
        );
        t.equal(
          await attempt(who.client, method, null, who.control),
          'invalid_request',
          `${method} without session`,
        );
      }
      const listWithOperation = await who.client.request(
        'session.resources.list',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      t.equal(codeOf(listWithOperation), 'invalid_request', 'list takes a null operation id');
      for (const method of METHODS.slice(1)) {
        const response = await who.client.request(method, PAYLOADS[method], {
          session: who.session,
          control: who.control,
        });
        t.equal(codeOf(response), 'invalid_request', `${method} needs an operation id`);
      }
      t.notOk(daemon.app.resources.has(who.session));
    });

    t.test(
      'a wrong token, another connection or a superseded token is unauthorized before any registry access',
      async (t) => {
        const daemon = await startDaemon(t);
        const who = await controller(daemon, transport);
        const stranger = await controller(daemon, transport);
        const forged = 'x'.repeat(43);
        for (const method of METHODS) {
          t.equal(
            await attempt(who.client, method, who.session, forged),
            'unauthorized',
            `${method}, wrong token`,
          );
          t.equal(
            await attempt(stranger.client, method, who.session, who.control),
            'unauthorized',
            `${method}, the controller's token on another connection`,
          );
          t.equal(
            await attempt(stranger.client, method, who.session, stranger.control),
            'unauthorized',
            `${method}, another session's token`,
          );
        }
        t.notOk(daemon.app.resources.has(who.session), 'no registry was created');

        const taken = await takeOver(daemon, transport, who);
        for (const method of METHODS) {
          t.equal(
            await attempt(who.client, method, who.session, who.control),
            'unauthorized',
            `${method}, superseded`,
          );
        }
        t.notOk(daemon.app.resources.has(who.session), 'still none');
        t.equal((await listed(taken)).entries.length, 0, 'the new controller reaches it');
      },
    );

    t.test('a foreign controller cannot read or change an existing registry', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const stranger = await controller(daemon, transport);
      const lookup = await registered(who, toolResource('lookup'));
      const before = await listed(who);
      const foreign = registryOf({ ...stranger, session: who.session });
      const refusals = [
        await foreign.list(),
        await foreign.register(toolResource('other')),
        await foreign.unregister(lookup.entry.resource_id, lookup.entry.revision_id),
        await foreign.clear(before.registry_revision),
      ];
      t.same(refusals.map(codeOf), ['unauthorized', 'unauthorized', 'unauthorized', 'unauthorized']);
      t.notMatch(JSON.stringify(refusals), lookup.entry.resource_id, 'nothing of the registry leaks');
      t.same(await listed(who), before, 'unchanged');
    });

    t.test('an unknown session is unknown_session', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      for (const method of METHODS) {
        t.equal(await attempt(who.client, method, 'ses_missing', who.control), 'unknown_session', method);
      }
    });

    t.test('executor authority alone never reads or changes a registry', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      await registered(who, toolResource('lookup'));
      const revision = (await listed(who)).registry_revision;
      const executorConnection = await daemon.connect(transport);
      const executor = await confirmedExecutor(executorConnection);
      for (const method of METHODS) {
        t.equal(
          await attempt(executorConnection, method, who.session, executor.resume_secret),
          'unauthorized',
          `${method} with the executor's secret`,
        );
      }
      const onController = await confirmedExecutor(who.client);
      t.equal(
        await attempt(who.client, 'session.resources.list', who.session, onController.resume_secret),
        'unauthorized',
        'not even on the controlling connection',
      );
      t.equal((await listed(who)).registry_revision, revision);
    });

    t.test('an ordinary v2 connection does not know the registry methods', async (t) => {
      const daemon = await startDaemon(t);
      const ordinary = await daemon.connect(transport, []);
      const { session, control } = await claimedSession(ordinary, daemon.workspace);
      for (const method of METHODS) {
        t.equal(await attempt(ordinary, method, session, control), 'unknown_method', method);
      }
      t.notOk(daemon.app.resources.has(session));
      const capabilities = (await ordinary.call('capabilities')).capabilities as { operations: string[] };
      for (const method of METHODS) t.notOk(capabilities.operations.includes(method), `${method} not listed`);
    });

    t.test('a profile connection sees the registry in its capabilities', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const { capabilities } = await client.call('capabilities');
      const callbacks = (
        capabilities as { application_callbacks: { registry: boolean; operations: string[] } }
      ).application_callbacks;
      t.equal(callbacks.registry, true);
      for (const method of METHODS) t.ok(callbacks.operations.includes(method), `${method} listed`);
      t.notOk((capabilities as { operations: string[] }).operations.includes('session.resources.list'));
    });

    t.test(
      'the registry belongs to the session: a takeover keeps it, the new controller uses it',
      async (t) => {
        const daemon = await startDaemon(t);
        const who = await controller(daemon, transport);
        const lookup = await registered(who, toolResource('lookup'));
        const taken = await takeOver(daemon, transport, who);
        t.same((await listed(taken)).entries, [lookup.entry]);
        const replaced = await registered(taken, toolResource('lookup'), lookup.entry.revision_id);
        t.equal(replaced.entry.registered_by.connection_id, taken.connectionId);
        t.equal(replaced.entry.registered_by.grant_generation, taken.generation);
        t.equal(taken.generation, who.generation + 1);

        const back = await claim(who.client, who.session);
        t.equal(codeOf(await registryOf(taken).list()), 'unauthorized', 'taken back');
        t.equal((await listed({ ...who, ...back })).entries[0]?.revision_id, replaced.entry.revision_id);
      },
    );
  });
}
