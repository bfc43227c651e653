import type { Test } from 'tap';
import t from 'tap';
import { MagiClient } from '../../client/magi-client.js';
import { Session, SessionControlEnded, TurnConnectionLost } from '../../client/session.js';
import { WireCallError } from '../../client/wire-client.js';
import type { TurnEvent } from '../../client/wire-types.js';
import { chunk, done, sse, stream } from '../helpers/provider-streams.js';
import { applicationTools, TOOL_CONTRACT, turnDaemon } from '../routes/turn.fixture.js';

const LOOKUP = {
  name: 'lookup',
  description: 'Find a note',
  source: { kind: 'inline', content: TOOL_CONTRACT },
} as const;

const STYLE = {
  name: 'style',
  description: 'Be brief',
  source: { kind: 'inline', content: 'Answer briefly.' },
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

t.test(
  'unregister removes one resource by kind and name; an absent name is resource_not_found',
  async (t) => {
    const { daemon } = await turnDaemon(t);
    const client = await MagiClient.over(() => daemon.open('socket'));
    const session = await client.createSession(daemon.workspace, 'Test session');
    const tool = await session.registerTool(LOOKUP);
    const skill = await session.registerSkill({ ...STYLE, name: 'lookup_help' });
    const removed = await session.unregisterTool('lookup');
    t.equal(removed.resource_id, tool.resource_id);
    t.equal(removed.removed_revision, tool.revision_id);
    const listing = await session.resources();
    t.equal(listing.registry_revision, removed.registry_revision);
    t.same(
      listing.entries.map((entry) => entry.name),
      ['lookup_help'],
      'the skill stays',
    );
    await t.rejects(session.unregisterTool('lookup'), {
      name: 'WireCallError',
      method: 'session.resources.unregister',
      code: 'resource_not_found',
    });
    await t.rejects(
      session.unregister('tool', 'lookup_help'),
      { name: 'WireCallError', method: 'session.resources.unregister', code: 'resource_not_found' },
      'a name of the other kind is not that resource',
    );
    t.equal((await session.unregisterSkill('lookup_help')).resource_id, skill.resource_id);
    t.same((await session.resources()).entries, []);
  },
);

t.test('clear removes every resource; clearing an empty registry keeps its revision', async (t) => {
  const { daemon } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'Test session');
  await session.registerTool(LOOKUP);
  await session.registerSkill(STYLE);
  const cleared = await session.clear();
  t.equal(cleared.removed_count, 2);
  const listing = await session.resources();
  t.same(listing.entries, []);
  t.equal(listing.registry_revision, cleared.registry_revision);
  const again = await session.clear();
  t.same(again, { registry_revision: cleared.registry_revision, removed_count: 0 });
});

t.test('close of an idle session answers closed and ends this token', async (t) => {
  const { daemon } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'Test session');
  t.same(await session.close(), { status: 'closed' });
  await t.rejects(session.resources(), {
    name: 'WireCallError',
    method: 'session.resources.list',
    code: 'unauthorized',
  });
  const later = await client.claimSession(session.id);
  t.same(later.claim.snapshot, { turn: null, terminal: null }, 'a later claim takes the session up');
});

/** A session whose provider holds its next answer until released, then streams `text`. */
async function heldTurn(t: Test, text: string) {
  const { daemon, provider } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'Test session');
  const hold = provider.hold();
  provider.script(stream([hold, sse(chunk({ content: text }, { finishReason: 'stop' })), done()]));
  return { daemon, provider, client, session, hold };
}

t.test(
  'close during a turn cancels it: run rejects, the next claim sees the cancelled terminal',
  async (t) => {
    const { daemon, session, hold } = await heldTurn(t, 'never');
    const running = session.run('go').catch((error: unknown) => error);
    await hold.reached;
    t.same(await session.close(), { status: 'closing' });
    const ended = await running;
    t.ok(ended instanceof SessionControlEnded, 'the run ends with the control');
    t.equal((ended as SessionControlEnded).reason, 'closed');
    hold.release();
    const observer = await MagiClient.over(() => daemon.open('socket'));
    // The cancelled turn's terminal may reach the new controller before the claim's answer does.
    const claimed = await Session.claim(observer.wire, session.id);
    const turnId = claimed.claim.snapshot.terminal?.turn_id ?? claimed.claim.snapshot.turn?.turn_id;
    t.ok(turnId, 'the claim knows the turn');
    const terminal = await claimed.terminal(turnId!);
    t.match(terminal, { status: 'cancelled', error: null });
  },
);

t.test('run resolves with the terminal and the text joined from the deltas', async (t) => {
  const { daemon, provider } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'Test session');
  provider.reply(['Hel', 'lo', ' there']);
  const run = await session.run('hello');
  t.equal(run.text, 'Hello there');
  t.equal(run.terminal.assistant_text, run.text, 'the same as the terminal says');
  t.equal(run.terminal.turn_id, run.accepted.turn_id);
  t.match(run.terminal, { status: 'completed', error: null, activity_dropped: 0 });

  provider.replyStatus(400);
  const failed = await session.run('again');
  t.equal(failed.terminal.status, 'failed', 'a failed turn resolves too');
  t.equal(failed.terminal.error?.code, 'provider_error');
  t.equal(failed.text, '');
});

t.test('run with an aborted signal stops the turn and resolves with its cancelled terminal', async (t) => {
  const { session, hold } = await heldTurn(t, 'late');
  const abort = new AbortController();
  const running = session.run('go', { signal: abort.signal });
  await hold.reached;
  abort.abort();
  const run = await running;
  t.match(run.terminal, { status: 'cancelled', error: null });
  hold.release();
  await t.rejects(session.run('no', { signal: abort.signal }), { name: 'AbortError' }, 'nothing starts');
});

t.test('a release or a takeover ends the run; the turn goes on for the next controller', async (t) => {
  const { daemon, session, hold } = await heldTurn(t, 'on');
  const released = session.run('go').catch((error: unknown) => error);
  await hold.reached;
  await session.release();
  t.match(await released, { name: 'SessionControlEnded', reason: 'released' });
  const next = await MagiClient.over(() => daemon.open('socket'));
  const claimed = await next.claimSession(session.id);
  t.match(claimed.claim.snapshot.turn, { status: 'running', sequence: 0, assistant_text: '' });
  const following = claimed.terminal(claimed.claim.snapshot.turn!.turn_id).catch((error: unknown) => error);
  const other = await MagiClient.over(() => daemon.open('socket'));
  await other.claimSession(session.id);
  t.match(await following.catch((error: unknown) => error), {
    name: 'SessionControlEnded',
    reason: 'takeover',
  });
  hold.release();
});

t.test(
  'terminal of an earlier turn, or of one whose snapshot expired, comes from the history; of an id the daemon does not know it rejects with unknown_turn',
  async (t) => {
    const { daemon, provider } = await turnDaemon(t);
    const client = await MagiClient.over(() => daemon.open('socket'));
    const session = await client.createSession(daemon.workspace, 'Test session');
    provider.reply(['first']);
    const first = await session.run('one');
    provider.reply(['second']);
    const second = await session.run('two');
    t.same(await session.terminal(first.accepted.turn_id), first.terminal, 'an earlier turn of this session');

    daemon.clock.advance(601_000);
    const later = await MagiClient.over(() => daemon.open('socket'));
    const claimed = await later.claimSession(session.id);
    t.same(claimed.claim.snapshot, { turn: null, terminal: null }, 'the snapshot no longer holds it');
    t.same(await claimed.terminal(second.accepted.turn_id), second.terminal, 'the same terminal as live');

    for (const turnId of ['turn_madeup', first.accepted.turn_id.slice(0, -1)]) {
      await t.rejects(claimed.terminal(turnId), {
        name: 'WireCallError',
        method: 'turn.application_evidence',
        code: 'unknown_turn',
      });
    }
    provider.reply(['third']);
    const third = await claimed.run('three');
    t.equal(third.terminal.status, 'completed', 'the session goes on after the refusals');
  },
);
