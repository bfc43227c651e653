import t from 'tap';
import { MagiClient } from '../../client/magi-client.js';
import { TurnConnectionLost } from '../../client/session.js';
import { WireCallError } from '../../client/wire-client.js';
import type { TurnEvent } from '../../client/wire-types.js';
import { chunk, done, sse, stream } from '../helpers/provider-streams.js';
import { applicationTools, TOOL_CONTRACT, turnDaemon } from '../routes/turn.fixture.js';

const LOOKUP = {
  name: 'lookup',
  description: 'Find a note',
  source: { kind: 'inline', content: TOOL_CONTRACT },
} as const;

t.test('a turn with a tool and a skill: typed events in order, until its terminal', async (t) => {
  const { daemon, provider } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'notes');
  const tool = await session.registerTool(LOOKUP);
  await session.registerSkill({
    name: 'style',
    description: 'Be brief',
    source: { kind: 'inline', content: 'Answer briefly.' },
  });
  const executor = await client.startExecutor({ lookup: () => ({}) });
  provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['Hel', 'lo']);
  const turn = await session.startTurn('go', { executor });
  t.match(turn.accepted, {
    status: 'accepted',
    application_manifest: { tools: [{ name: 'lookup', resource_id: tool.resource_id }] },
  });
  const events: TurnEvent[] = [];
  for await (const event of turn.events) events.push(event);
  t.same(
    events.map((event) => event.sequence),
    events.map((_, index) => index),
    'every event of the turn, numbered from 0',
  );
  t.equal(events[0]?.event, 'turn.started');
  t.same(
    events.filter((event) => event.event === 'turn.assistant_delta').map((event) => event.payload.delta),
    ['Hel', 'lo'],
  );
  const terminal = events.at(-1)!;
  t.match(terminal, { event: 'turn.terminal', payload: { status: 'completed', assistant_text: 'Hello' } });
  const system = (await provider.nextRequest()).body.messages[0];
  t.same(system, { role: 'system', content: 'Answer briefly.' }, 'the skill reached the model');
  await executor.close();
});

t.test('a session without resources runs an ordinary turn', async (t) => {
  const { daemon, provider } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'Test session');
  provider.reply(['hi']);
  const turn = await session.startTurn('hello');
  t.equal(turn.accepted.application_manifest, null);
  const events: TurnEvent[] = [];
  for await (const event of turn.events) events.push(event);
  t.match(events.at(-1), { payload: { status: 'completed', assistant_text: 'hi' } });
  t.same(applicationTools((await provider.nextRequest()).body), [], 'no application tool was offered');
});

t.test(
  "registering a name again replaces its revision; a refusal carries its method, code and the daemon's message",
  async (t) => {
    const { daemon } = await turnDaemon(t);
    const client = await MagiClient.over(() => daemon.open('socket'));
    const session = await client.createSession(daemon.workspace, 'Test session');
    const first = await session.registerTool(LOOKUP);
    const second = await session.registerTool({ ...LOOKUP, description: 'Find one note' });
    t.equal(second.resource_id, first.resource_id, 'the same resource');
    t.not(second.revision_id, first.revision_id, 'a new revision');
    t.equal((await session.resources()).entries.length, 1);
    const refusal = await session
      .registerTool({ ...LOOKUP, name: 'broken', source: { kind: 'inline', content: '{}' } })
      .catch((error: unknown) => error);
    t.type(refusal, WireCallError);
    t.match(refusal, {
      name: 'WireCallError',
      method: 'session.resources.register',
      code: 'invalid_payload',
      detail: 'the tool contract needs input_schema and output_schema',
      message:
        'session.resources.register: invalid_payload: the tool contract needs input_schema and output_schema',
    });
    t.equal((await session.resources()).entries.length, 1, 'a refusal changes nothing');
  },
);

t.test('a refused turn.start throws its code and leaves no listener behind', async (t) => {
  const { daemon, provider } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'Test session');
  const hold = provider.hold();
  provider.script(stream([hold, sse(chunk({ content: 'first' }, { finishReason: 'stop' })), done()]));
  const first = await session.startTurn('one');
  await t.rejects(session.startTurn('two'), {
    name: 'WireCallError',
    method: 'turn.start',
    code: 'session_busy',
    message: /^turn\.start: session_busy: \S/,
  });
  hold.release();
  const texts: string[] = [];
  for await (const event of first.events)
    if (event.event === 'turn.assistant_delta') texts.push(event.payload.delta);
  t.same(texts, ['first'], 'the events of the first turn only');
});

t.test('a dropped controller ends the iterator; a new controller reads the turn that went on', async (t) => {
  const { daemon, provider } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'Test session');
  const hold = provider.hold();
  provider.script(stream([hold, sse(chunk({ content: 'later' }, { finishReason: 'stop' })), done()]));
  const turn = await session.startTurn('go');
  await hold.reached;
  client.close();
  const ended = await (async () => {
    for await (const _ of turn.events);
  })().catch((error: unknown) => error);
  t.ok(ended instanceof TurnConnectionLost, 'the iterator says the connection was lost');
  const again = await MagiClient.over(() => daemon.open('socket'));
  const reclaimed = await again.claimSession(session.id);
  hold.release();
  const terminal = await reclaimed.terminal(turn.accepted.turn_id);
  t.match(terminal, { status: 'completed', assistant_text: 'later' });
  const later = await MagiClient.over(() => daemon.open('socket'));
  const claimedAfter = await later.claimSession(session.id);
  t.same(await claimedAfter.terminal(turn.accepted.turn_id), terminal, 'after the end, from the claim');
});
