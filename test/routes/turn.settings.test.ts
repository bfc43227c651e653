import t from 'tap';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon, listing } from './catalog.fixture.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { applicationSession, heldLookupCall, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`turn settings (${transport})`, async (t) => {
    t.test(
      'a running turn keeps the settings it was admitted with; the next turn takes the new ones',
      async (t) => {
        const { daemon, provider } = await turnDaemon(t);
        const { who, executor, application } = await applicationSession(daemon, transport);
        provider.replyModels(listing(['model-b']));
        await who.client.call('catalog.refresh', {}, { operation: op() });
        const hold = heldLookupCall(provider);
        provider.reply(['done']).reply(['next']);
        resultOf(await startTurn(who, { prompt: 'go', application }));
        await hold.reached;
        const changed = await who.client.call(
          'settings.update',
          { workspace: null, changes: { model: 'model-b', reasoning_effort: 'low', fast: true } },
          { operation: op() },
        );
        t.match(changed.effective, { model: 'model-b' });
        hold.release();
        const call = await who.client.event('turn.application_tool_call');
        t.equal(codeOf(await submitResult(who.client, who.session, executor, call)), 'ok');
        t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
        const rounds = provider.requests.filter((request) => request.method === 'POST');
        t.equal(rounds.length, 2);
        for (const round of rounds) {
          t.equal(round.body.model, 'scripted-model', 'both rounds use the model of admission');
          t.notOk('reasoning_effort' in round.body);
          t.notOk('service_tier' in round.body);
        }
        resultOf(await startTurn(who, { prompt: 'again', application }));
        await who.client.event('turn.terminal');
        const next = provider.requests.at(-1)!;
        t.match(next.body, { model: 'model-b', reasoning_effort: 'low', service_tier: 'priority' });
      },
    );

    t.test("a turn runs with its workspace's pin", async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      provider.replyModels(listing(['pinned-model']));
      provider.reply(['ok']);
      const who = await controller(daemon, transport);
      await who.client.call('catalog.refresh', {}, { operation: op() });
      await who.client.call(
        'settings.update',
        { workspace: daemon.workspace, changes: { model: 'pinned-model', reasoning_effort: 'high' } },
        { operation: op() },
      );
      resultOf(await startTurn(who, { prompt: 'go' }));
      await who.client.event('turn.terminal');
      t.match(provider.requests.at(-1)!.body, { model: 'pinned-model', reasoning_effort: 'high' });
    });

    t.test('without any model selected a turn is provider_unavailable', async (t) => {
      const { daemon, provider } = await catalogDaemon(t);
      const who = await controller(daemon, transport);
      t.equal(codeOf(await startTurn(who, { prompt: 'go' })), 'provider_unavailable');
      t.equal(provider.requests.length, 0);
    });
  });
}
