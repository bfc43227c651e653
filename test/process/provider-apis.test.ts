import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { SUBAGENT_INSTRUCTION } from '../../core/agent/subagent.js';
import { toolResource } from '../core/registry/registry-fixture.js';
import { listed, registered, resultOf } from '../routes/session.resources.fixture.js';
import { confirmedExecutor, startTurn, submitResult } from '../routes/turn.fixture.js';
import { providerApisDaemon } from './provider-apis-fixture.js';
import { WAIT_MS } from './seed-fixture.js';

/**
 * The same turns over each API the daemon speaks, against the real binary: an application-tool turn
 * (executor, manifest, evidence) and a built-in-tool turn, then a subagent over Messages.
 */
t.test('application and built-in tool turns over Chat Completions, Responses and Messages', async (t) => {
  const daemon = await providerApisDaemon(t);
  writeFileSync(join(daemon.workspace, 'README.md'), 'Tea is in the second drawer.\n');
  for (const api of Object.values(daemon.apis)) {
    await t.test(`${api.name}: an application tool, through its executor, with its evidence`, async (t) => {
      await daemon.select(api.model);
      const who = await daemon.controller();
      const executor = await confirmedExecutor(who.client);
      const tool = await registered(who, toolResource('lookup'));
      const listing = await listed(who);
      const application = {
        expected_registry_revision: listing.registry_revision,
        executor_id: executor.executor_id,
        executor_generation: executor.executor_generation,
        tool_authorizations: [
          {
            resource_id: tool.entry.resource_id,
            revision_id: tool.entry.revision_id,
            revision_sha256: tool.entry.revision_sha256,
          },
        ],
      };
      const callId = `call_app_${api.name}`;
      api.server.script(api.calls([{ id: callId, name: 'lookup', arguments: '{"path":"orders/7"}' }]));
      api.server.script(api.text(`Order 7 is on its way (${api.name}).`));
      const accepted = resultOf<{ turn_id: string; application_manifest: { tools: unknown[] } }>(
        await startTurn(who, { prompt: 'Where is order 7?', application }),
      );
      t.equal(accepted.application_manifest.tools.length, 1);
      const call = await who.client.event('turn.application_tool_call', WAIT_MS);
      t.match(call.payload, { name: 'lookup', provider_call_id: callId, arguments: { path: 'orders/7' } });
      const evidence = resultOf<{ calls: unknown[]; application_manifest: unknown }>(
        await who.client.request(
          'turn.application_evidence',
          { turn_id: accepted.turn_id },
          { session: who.session, control: who.control },
        ),
      );
      t.same(evidence.application_manifest, accepted.application_manifest);
      t.match(evidence.calls, [
        { call_id: call.payload.call_id, provider_call_id: callId, status: 'pending' },
      ]);
      resultOf(await submitResult(who.client, who.session, executor, call));
      const terminal = await who.client.event('turn.terminal', WAIT_MS);
      t.match(terminal.payload, {
        status: 'completed',
        assistant_text: `Order 7 is on its way (${api.name}).`,
        application_manifest: accepted.application_manifest,
      });
      const continuation = api.server.requests.at(-1)!;
      t.equal(api.resultIn(continuation, callId), '{}', "the executor's result went back in the API's shape");
    });

    await t.test(`${api.name}: a built-in tool reads the workspace for the model`, async (t) => {
      await daemon.select(api.model);
      const who = await daemon.controller();
      const callId = `call_read_${api.name}`;
      api.server.script(api.calls([{ id: callId, name: 'read_file', arguments: '{"path":"README.md"}' }]));
      api.server.script(api.text('Second drawer.'));
      resultOf(await startTurn(who, { prompt: 'Where is the tea?' }));
      t.match((await who.client.event('turn.terminal', WAIT_MS)).payload, {
        status: 'completed',
        assistant_text: 'Second drawer.',
      });
      const result = JSON.parse(api.resultIn(api.server.requests.at(-1)!, callId) ?? '{}');
      t.equal(result.content, 'Tea is in the second drawer.\n');
    });
  }

  await t.test('anthropic: a subagent runs its own loop over Messages', async (t) => {
    const { anthropic } = daemon.apis;
    await daemon.select(anthropic.model);
    const who = await daemon.controller();
    anthropic.server.script(
      anthropic.calls([{ id: 'call_spawn', name: 'spawn_agent', arguments: '{"task":"Find the tea."}' }]),
    );
    anthropic.server.script(
      anthropic.calls([{ id: 'call_0', name: 'read_file', arguments: '{"path":"README.md"}' }]),
    );
    anthropic.server.script(anthropic.text('The tea is in the second drawer.'));
    anthropic.server.script(anthropic.text('Your tea: second drawer.'));
    resultOf(await startTurn(who, { prompt: 'Send someone to find the tea.' }));
    t.match((await who.client.event('turn.terminal', WAIT_MS)).payload, {
      status: 'completed',
      assistant_text: 'Your tea: second drawer.',
    });
    const [, child, childSecond, parent] = anthropic.server.requests.slice(-4);
    t.match(child!.body, {
      system: SUBAGENT_INSTRUCTION,
      messages: [{ role: 'user', content: 'Find the tea.' }],
    });
    t.match(JSON.parse(anthropic.resultIn(childSecond!, 'call_0') ?? '{}'), {
      content: 'Tea is in the second drawer.\n',
    });
    t.match(JSON.parse(anthropic.resultIn(parent!, 'call_spawn') ?? '{}'), {
      answer: 'The tea is in the second drawer.',
      truncated: false,
    });
  });
});
