import pino from 'pino';
import t, { type Test } from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { TITLE_LIMITS } from '../../core/limits.js';
import { TITLE_INSTRUCTION } from '../../core/sessions/title-text.js';
import {
  claimedSession,
  op,
  startDaemon,
  type TestDaemon,
  type TestDaemonOptions,
  TRANSPORTS,
  type Transport,
} from '../helpers/daemon.js';
import { chunk, done, sse, stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';

const PROVIDER_WORDS = 'provider-words-5c1e';
const settle = () => new Promise((resolve) => setImmediate(resolve));

interface TitleDaemon {
  daemon: TestDaemon;
  provider: ScriptedProvider;
  logs: Array<Record<string, unknown>>;
}

async function titleDaemon(t: Test, options: TestDaemonOptions = {}): Promise<TitleDaemon> {
  const provider = await ScriptedProvider.start(t);
  const logs: Array<Record<string, unknown>> = [];
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
    ...options,
  });
  return { daemon, provider, logs };
}

interface Untitled {
  client: WireClient;
  session: string;
  control: string;
}

async function untitledSession(daemon: TestDaemon, transport: Transport): Promise<Untitled> {
  const client = await daemon.connect(transport, []);
  const { session, control } = await claimedSession(client, daemon.workspace, null);
  return { client, session, control };
}

/** Runs one turn to its terminal and returns the terminal's payload. */
async function completedTurn(who: Untitled, prompt: string): Promise<Record<string, unknown>> {
  await who.client.call(
    'turn.start',
    { prompt },
    { session: who.session, control: who.control, operation: op() },
  );
  return (await who.client.event('turn.terminal')).payload;
}

async function listedSession(client: WireClient, session: string) {
  const listed = await client.call('session.list', { cursor: null, limit: 100 });
  return (listed.sessions as Array<Record<string, unknown>>).find((entry) => entry.session_id === session);
}

/** A title answer held before its first byte until the hold is released. */
function heldTitle(provider: ScriptedProvider, title: string) {
  const hold = provider.hold();
  provider.script(
    stream([hold, sse(chunk({ content: title })), sse(chunk({}, { finishReason: 'stop' })), done()]),
  );
  return hold;
}

/**
 * An untitled session whose first turn has completed, with its title request held at the provider before
 * the first byte of `title`.
 */
async function titleBeingMade(
  daemon: TestDaemon,
  provider: ScriptedProvider,
  transport: Transport,
  title: string,
) {
  const who = await untitledSession(daemon, transport);
  provider.reply(['Answer.']);
  const hold = heldTitle(provider, title);
  await completedTurn(who, 'Hi');
  await hold.reached;
  return { who, hold };
}

/** Sends `session.close` with the controller's token; `answered()` says whether its answer came yet. */
function closeSession(who: Untitled) {
  let answered = false;
  const closing = who.client
    .call('session.close', {}, { session: who.session, control: who.control, operation: op() })
    .then((result) => {
      answered = true;
      return result;
    });
  return { closing, answered: () => answered };
}

/** Waits until the daemon holds `count` requests unanswered. */
async function inFlight(daemon: TestDaemon, count: number): Promise<void> {
  while (daemon.app.framing.inFlight < count) await settle();
}

for (const transport of TRANSPORTS) {
  t.test(`session titles (${transport})`, async (t) => {
    t.test('after the first completed turn an untitled session gets a bounded title, listed', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const who = await untitledSession(daemon, transport);
      const created = await listedSession(who.client, who.session);
      provider.reply(['It is ', 'tea.md.']);
      provider.reply([`"Tea note ${'location '.repeat(20)}"`]);
      const terminal = await completedTurn(who, 'Where is my tea note?');
      t.equal(terminal.status, 'completed');
      await provider.nextRequest();
      const request = await provider.nextRequest();
      t.equal(request.path, '/v1/chat/completions', 'a title request follows the terminal');
      t.same(request.body.messages, [
        { role: 'system', content: TITLE_INSTRUCTION },
        { role: 'user', content: 'Request:\nWhere is my tea note?\n\nAnswer:\nIt is tea.md.' },
      ]);
      t.notOk('tools' in request.body);
      await daemon.app.titles!.settled(who.session);
      const listed = await listedSession(who.client, who.session);
      const title = String(listed?.title);
      t.match(title, /^Tea note location location/);
      t.ok(Buffer.byteLength(title) <= TITLE_LIMITS.title_bytes, 'within its byte bound');
      t.equal(title, title.trim());
      t.ok(Number(listed?.updated_at) >= Number(created?.updated_at), 'the row changed');

      provider.reply(['Again.']);
      t.equal((await completedTurn(who, 'And now?')).status, 'completed');
      await daemon.app.titles!.settled(who.session);
      t.equal(provider.requests.length, 3, 'a later turn asks for no title');
      t.equal(provider.unexpected, 0);
      const replay = await who.client.call(
        'session.replay',
        { cursor: null, limit: 100 },
        { session: who.session },
      );
      t.notMatch(JSON.stringify(replay), 'Tea note', 'the title is on the session row, not in its records');
    });

    t.test('a session created with a title never asks for one', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const client = await daemon.connect(transport, []);
      const { session, control } = await claimedSession(client, daemon.workspace, 'Mine');
      provider.reply(['Answer.']);
      t.equal((await completedTurn({ client, session, control }, 'Hi')).status, 'completed');
      t.equal(daemon.app.titles!.isRunning(session), false);
      t.equal(provider.requests.length, 1);
      t.equal((await listedSession(client, session))?.title, 'Mine');
    });

    t.test('a failed first turn asks for no title; the first completed one does', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const who = await untitledSession(daemon, transport);
      provider.replyStatus(400);
      t.equal((await completedTurn(who, 'Hi')).status, 'failed');
      t.equal(daemon.app.titles!.isRunning(who.session), false);
      provider.reply(['Hello.']).reply(['Greeting']);
      t.equal((await completedTurn(who, 'Hi again')).status, 'completed');
      await daemon.app.titles!.settled(who.session);
      t.equal((await listedSession(who.client, who.session))?.title, 'Greeting');
    });

    t.test('a cancelled first turn asks for no title', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const who = await untitledSession(daemon, transport);
      const hold = provider.hold();
      provider.script(stream([hold]));
      const accepted = await who.client.call(
        'turn.start',
        { prompt: 'Hi' },
        { session: who.session, control: who.control, operation: op() },
      );
      await hold.reached;
      await who.client.call(
        'turn.stop',
        { turn_id: accepted.turn_id },
        { session: who.session, control: who.control, operation: op() },
      );
      t.equal((await who.client.event('turn.terminal')).payload.status, 'cancelled');
      t.equal(daemon.app.titles!.isRunning(who.session), false);
      t.equal(provider.requests.length, 1);
    });

    t.test('a title failure leaves the title null, the turn completed, and logs a fixed line', async (t) => {
      const { daemon, provider, logs } = await titleDaemon(t);
      const who = await untitledSession(daemon, transport);
      provider.reply(['Answer.']).replyStatus(400, { message: `refused ${PROVIDER_WORDS}` });
      const terminal = await completedTurn(who, 'Hi');
      await daemon.app.titles!.settled(who.session);
      t.match(terminal, { status: 'completed', error: null, assistant_text: 'Answer.' });
      t.equal((await listedSession(who.client, who.session))?.title, null);
      const claim = await who.client.call('session.claim', {}, { session: who.session, operation: op() });
      t.match((claim.snapshot as { terminal: unknown }).terminal, { status: 'completed' });
      const line = logs.find((entry) => entry.msg === 'the session title could not be made');
      t.match(line, { level: 40, session_id: who.session, reason: 'provider_error' });
      t.notMatch(JSON.stringify(logs), PROVIDER_WORDS, 'nothing of the provider is logged');
      t.notMatch(JSON.stringify(logs), 'Answer.', 'nor the conversation');
    });

    t.test('session.close waits for a title being made, then answers; the title is kept', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const { who, hold } = await titleBeingMade(daemon, provider, transport, 'Held title');
      const { closing, answered } = closeSession(who);
      await inFlight(daemon, 1);
      await settle();
      t.equal(answered(), false, 'the close waits for the title');
      t.equal(daemon.app.sessions.isClaimed(who.session), true, 'and the session stays controlled');
      hold.release();
      t.same(await closing, { status: 'closed' });
      t.equal(daemon.app.sessions.isClaimed(who.session), false);
      t.equal((await listedSession(who.client, who.session))?.title, 'Held title');
    });

    t.test('session.release waits for a title being made, then answers; the title is kept', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const { who, hold } = await titleBeingMade(daemon, provider, transport, 'Released title');
      let answered = false;
      const releasing = who.client
        .call('session.release', {}, { session: who.session, control: who.control, operation: op() })
        .then((result) => {
          answered = true;
          return result;
        });
      await inFlight(daemon, 1);
      await settle();
      t.equal(answered, false, 'the release waits for the title');
      t.equal(daemon.app.sessions.isClaimed(who.session), true, 'and the session stays controlled');
      hold.release();
      t.same(await releasing, { released: true });
      t.equal(daemon.app.sessions.isClaimed(who.session), false);
      t.equal((await listedSession(who.client, who.session))?.title, 'Released title');
    });

    t.test('a release whose control is taken over while it waits for the title is refused', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const { who, hold } = await titleBeingMade(daemon, provider, transport, 'Taken over');
      const releasing = who.client.request(
        'session.release',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      await inFlight(daemon, 1);
      const other = await daemon.connect(transport, []);
      await other.call('session.claim', {}, { session: who.session, operation: op() });
      hold.release();
      t.equal((await releasing).error?.code, 'unauthorized');
      t.equal(daemon.app.sessions.isClaimed(who.session), true, 'the new controller keeps its control');
    });

    t.test('a disconnect lets the session go only once its title is stored', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const { who, hold } = await titleBeingMade(daemon, provider, transport, 'After disconnect');
      who.client.close();
      while (daemon.app.framing.connections.size > 0) await settle();
      t.equal(daemon.app.sessions.isClaimed(who.session), true, 'still controlled while the title is made');
      const watcher = await daemon.connect(transport, []);
      t.match(await listedSession(watcher, who.session), { claimed: true, title: null });
      hold.release();
      await daemon.app.titles!.settled(who.session);
      await settle();
      t.equal(daemon.app.sessions.isClaimed(who.session), false);
      t.match(await listedSession(watcher, who.session), { claimed: false, title: 'After disconnect' });
    });

    t.test(
      'a claim while a disconnected controller waits for its title keeps its control after',
      async (t) => {
        const { daemon, provider } = await titleDaemon(t);
        const { who, hold } = await titleBeingMade(daemon, provider, transport, 'Claimed meanwhile');
        who.client.close();
        while (daemon.app.framing.connections.size > 0) await settle();
        const other = await daemon.connect(transport, []);
        await other.call('session.claim', {}, { session: who.session, operation: op() });
        hold.release();
        await daemon.app.titles!.settled(who.session);
        await settle();
        t.equal(daemon.app.sessions.isClaimed(who.session), true, 'the new claim is not ended');
      },
    );

    t.test('a close with a wrong token is refused at once while a title is being made', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      const { who, hold } = await titleBeingMade(daemon, provider, transport, 'Still made');
      const refused = await who.client.request(
        'session.close',
        {},
        { session: who.session, control: 'not-the-token', operation: op() },
      );
      t.equal(refused.error?.code, 'unauthorized');
      t.equal(daemon.app.titles!.isRunning(who.session), true, 'answered before the title ended');
      hold.release();
      await daemon.app.titles!.settled(who.session);
      t.equal((await listedSession(who.client, who.session))?.title, 'Still made');
    });

    t.test('a title past its deadline is aborted: the close answers and the title stays null', async (t) => {
      const { daemon, provider, logs } = await titleDaemon(t);
      const { who } = await titleBeingMade(daemon, provider, transport, 'Too late');
      const { closing, answered } = closeSession(who);
      await inFlight(daemon, 1);
      daemon.clock.advance(TITLE_LIMITS.deadline_ms - 1);
      await settle();
      t.equal(answered(), false, 'still waiting 1 ms before the deadline');
      daemon.clock.advance(1);
      t.same(await closing, { status: 'closed' });
      await provider.requests[1]!.disconnected;
      t.equal((await listedSession(who.client, who.session))?.title, null);
      t.match(
        logs.find((entry) => entry.msg === 'the session title could not be made'),
        { reason: 'deadline' },
      );
    });

    t.test('a title being made keeps the daemon from its idle stop', async (t) => {
      const stops: number[] = [];
      const { daemon, provider } = await titleDaemon(t, {
        idleTimeoutMs: 1_000,
        onIdle: () => stops.push(1),
      });
      const { who, hold } = await titleBeingMade(daemon, provider, transport, 'Kept awake');
      who.client.close();
      while (daemon.app.framing.connections.size > 0) await settle();
      daemon.clock.advance(TITLE_LIMITS.deadline_ms - 1);
      t.same(stops, [], 'no idle stop while the title is being made');
      hold.release();
      await daemon.app.titles!.settled(who.session);
      daemon.clock.advance(999);
      t.same(stops, []);
      daemon.clock.advance(1);
      t.same(stops, [1], 'the idle timer starts once the title is stored');
    });

    t.test('shutdown waits for a title being made until its deadline', async (t) => {
      const { daemon, provider } = await titleDaemon(t);
      await titleBeingMade(daemon, provider, transport, 'Never stored');
      let closed = false;
      const closing = daemon.app.close().then(() => (closed = true));
      for (let i = 0; i < 20; i++) await settle();
      t.equal(closed, false, 'the store stays open for the title');
      daemon.clock.advance(TITLE_LIMITS.deadline_ms);
      await closing;
      t.equal(closed, true);
      await provider.requests[1]!.disconnected;
    });
  });
}
