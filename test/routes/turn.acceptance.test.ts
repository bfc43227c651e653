import t from 'tap';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { stream } from '../helpers/provider-streams.js';
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
import {
  applicationSession,
  applicationTools,
  confirmedExecutor,
  startTurn,
  turnDaemon,
} from './turn.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`turn.start acceptance (${transport})`, async (t) => {
    t.test('the application member must select exactly the current registry', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      const [authorization] = application.tool_authorizations as Array<Record<string, string>>;
      const refusals: Array<[string, Record<string, unknown>, string]> = [
        [
          'a stale registry revision',
          { ...application, expected_registry_revision: 'reg_stale' },
          'conflict',
        ],
        ['a missing tool', { ...application, tool_authorizations: [] }, 'executor_members_or_conflict'],
        [
          'an extra tool',
          {
            ...application,
            tool_authorizations: [authorization, { ...authorization, resource_id: 'res_extra' }],
          },
          'conflict',
        ],
        [
          'a stale revision of the tool',
          { ...application, tool_authorizations: [{ ...authorization, revision_id: 'rev_old' }] },
          'conflict',
        ],
        [
          'a wrong revision hash',
          { ...application, tool_authorizations: [{ ...authorization, revision_sha256: '0'.repeat(64) }] },
          'conflict',
        ],
        [
          'a duplicate authorization',
          { ...application, tool_authorizations: [authorization, authorization] },
          'invalid_payload',
        ],
        [
          'tools without an executor',
          { ...application, executor_id: null, executor_generation: null },
          'invalid_payload',
        ],
        ['half an executor', { ...application, executor_generation: null }, 'invalid_payload'],
        ['a stale executor generation', { ...application, executor_generation: 2 }, 'stale_connection'],
      ];
      for (const [what, selection, code] of refusals) {
        const answer = codeOf(await startTurn(who, { prompt: 'hi', application: selection }));
        if (code === 'executor_members_or_conflict') t.equal(answer, 'conflict', what);
        else t.equal(answer, code, what);
      }
      t.equal(provider.requests.length, 0, 'no refused turn reached the provider');
      t.equal(codeOf(await startTurn(who, { prompt: 'hi' })), 'unsupported_capability', 'an ordinary turn');
      t.equal(daemon.app.turns.activeCount, 0);
      t.equal(daemon.app.resources.stats().retained_snapshots, 0, 'every refusal released its snapshot');
    });

    t.test('an ordinary connection can neither select nor skip a nonempty registry', async (t) => {
      const { daemon } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      const plain = await daemon.connect(transport, []);
      const claim = await plain.call('session.claim', {}, { session: who.session, operation: op() });
      const envelope = { session: who.session, control: claim.control_token as string };
      const withApplication = await plain.request(
        'turn.start',
        { prompt: 'hi', application },
        { ...envelope, operation: op() },
      );
      t.equal(codeOf(withApplication), 'unsupported_capability');
      const ordinary = await plain.request('turn.start', { prompt: 'hi' }, { ...envelope, operation: op() });
      t.equal(codeOf(ordinary), 'unsupported_capability');
    });

    t.test('skill-only and empty snapshots need [] and null executor members', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const who = await controller(daemon, transport);
      const emptyRevision = (await listed(who)).registry_revision;
      provider.reply(['ok']);
      const empty = resultOf<{ application_manifest: Record<string, unknown> }>(
        await startTurn(who, {
          prompt: 'hi',
          application: {
            expected_registry_revision: emptyRevision,
            executor_id: null,
            executor_generation: null,
            tool_authorizations: [],
          },
        }),
      );
      t.match(empty.application_manifest, { resources: [], tools: [], accepted_executor: null });
      await who.client.event('turn.terminal');

      await registered(who, skillResource('style', { content: 'Be kind.' }));
      const revision = (await listed(who)).registry_revision;
      const executor = await confirmedExecutor(who.client);
      t.equal(
        codeOf(
          await startTurn(who, {
            prompt: 'hi',
            application: {
              expected_registry_revision: revision,
              executor_id: executor.executor_id,
              executor_generation: executor.executor_generation,
              tool_authorizations: [],
            },
          }),
        ),
        'invalid_payload',
        'a skill-only turn takes no executor',
      );
      provider.reply(['kind']);
      const skillOnly = resultOf<{ application_manifest: Record<string, unknown> }>(
        await startTurn(who, {
          prompt: 'hi',
          application: {
            expected_registry_revision: revision,
            executor_id: null,
            executor_generation: null,
            tool_authorizations: [],
          },
        }),
      );
      t.match(skillOnly.application_manifest, { tools: [], accepted_executor: null });
      t.equal((skillOnly.application_manifest.resources as unknown[]).length, 1);
      await who.client.event('turn.terminal');
      await provider.nextRequest();
      const request = await provider.nextRequest();
      t.match(request.body, { messages: [{ role: 'system', content: 'Be kind.' }] });
    });

    t.test('one active turn per session', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const hold = provider.hold();
      provider.script(stream([hold]));
      const who = await controller(daemon, transport);
      resultOf(await startTurn(who, { prompt: 'first' }));
      t.equal(codeOf(await startTurn(who, { prompt: 'second' })), 'session_busy');
      hold.release();
    });

    t.test('the registry stays selected as accepted, whatever happens to it later', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
      provider.reply(['done']);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const call = await who.client.event('turn.application_tool_call');
      const registry = registryOf(who);
      const listing = await listed(who);
      const tool = listing.entries.find((entry) => entry.name === 'lookup')!;
      resultOf(await registry.unregister(tool.resource_id, tool.revision_id));
      resultOf(await registry.register(toolResource('lookup', { description: 'replaced' })));
      const ack = await who.client.request(
        'turn.application_tool_result',
        {
          turn_id: call.payload.turn_id,
          call_id: call.payload.call_id,
          executor_id: executor.executor_id,
          executor_generation: executor.executor_generation,
          resource_id: tool.resource_id,
          revision_id: tool.revision_id,
          revision_sha256: tool.revision_sha256,
          outcome: { status: 'success', value: {} },
        },
        { session: who.session, operation: op() },
      );
      t.equal(codeOf(ack), 'ok', 'the original revision tuple is still the one required');
      const terminal = await who.client.event('turn.terminal');
      t.equal(terminal.payload.status, 'completed');
      await provider.nextRequest();
      const continuation = await provider.nextRequest();
      t.match(continuation.body, { messages: [{ role: 'system', content: 'Answer briefly.' }] });
      t.match(applicationTools(continuation.body), [
        { function: { name: 'lookup', description: 'the lookup tool' } },
      ]);
    });
  });
}
