import t from 'tap';
import { PROFILE_LIMITS } from '../../core/limits.js';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { chunk, done, sse, stream } from '../helpers/provider-streams.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { applicationSession, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

const SECRET_WORDS = 'provider-secret-7f3a';

for (const transport of TRANSPORTS) {
  t.test(`turn lifecycle (${transport})`, async (t) => {
    t.test('a turn outlives its controller; a takeover sees it and receives its later events', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      const hold = provider.hold();
      provider.script(stream([hold]));
      const accepted = resultOf<{ turn_id: string; application_manifest: unknown }>(
        await startTurn(who, { prompt: 'go', application }),
      );
      await hold.reached;
      const selected = await daemon.connect(transport);
      const claim = await selected.call('session.claim', {}, { session: who.session, operation: op() });
      t.same(
        claim.snapshot,
        {
          turn: {
            turn_id: accepted.turn_id,
            status: 'running',
            sequence: 0,
            assistant_text: '',
            application_manifest: accepted.application_manifest,
          },
          terminal: null,
        },
        'the snapshot carries the accepted manifest, byte for byte',
      );
      const plain = await daemon.connect(transport, []);
      const plainClaim = await plain.call('session.claim', {}, { session: who.session, operation: op() });
      t.notOk(
        'application_manifest' in (plainClaim.snapshot as { turn: object }).turn,
        'never to an ordinary connection',
      );
      const stopped = await plain.request(
        'turn.stop',
        { turn_id: accepted.turn_id },
        { session: who.session, control: plainClaim.control_token as string, operation: op() },
      );
      t.equal(codeOf(stopped), 'ok');
      const terminal = await plain.event('turn.terminal');
      t.equal(terminal.payload.status, 'cancelled');
      t.notOk('application_manifest' in terminal.payload, 'the ordinary controller sees no manifest');
      const plainReplay = await plain.call(
        'session.replay',
        { cursor: null, limit: 100 },
        { session: who.session },
      );
      t.notMatch(JSON.stringify(plainReplay), 'application_manifest', 'nor in replayed history');
      const selectedReplay = await selected.call(
        'session.replay',
        { cursor: null, limit: 100 },
        { session: who.session },
      );
      t.match(
        JSON.stringify(selectedReplay),
        'application_manifest',
        'which a profile connection reads whole',
      );
      const lookup = await selected.request('operation.lookup', { operation_id: 'x' }, {});
      t.equal(codeOf(lookup), 'ok');
      hold.release();
    });

    t.test('a claim snapshot shows the active turn, else the last terminal, within 24 KiB', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      const long = 'x'.repeat(15_000);
      provider.reply([long]);
      resultOf(await startTurn(who, { prompt: 'first', application }));
      await who.client.event('turn.assistant_delta');
      await who.client.event('turn.terminal');
      const hold = provider.hold();
      provider.script(stream([sse(chunk({ content: long })), hold, done()]));
      const second = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'second', application }));
      await hold.reached;
      await who.client.event('turn.assistant_delta');
      const other = await daemon.connect(transport);
      const claim = await other.request('session.claim', {}, { session: who.session, operation: op() });
      const snapshot = resultOf<{ snapshot: { turn: Record<string, unknown>; terminal: unknown } }>(
        claim,
      ).snapshot;
      t.match(snapshot.turn, { turn_id: second.turn_id, assistant_text: long });
      t.equal(snapshot.terminal, null, 'the active turn supersedes the terminal before it');
      t.ok(Buffer.byteLength(JSON.stringify(snapshot)) <= 24 * 1024, 'within 24 KiB');
      hold.release();
      await other.event('turn.terminal');
      const again = await daemon.connect(transport);
      const later = resultOf<{ snapshot: { turn: unknown; terminal: Record<string, unknown> } }>(
        await again.request('session.claim', {}, { session: who.session, operation: op() }),
      ).snapshot;
      t.equal(later.turn, null);
      t.match(later.terminal, { turn_id: second.turn_id, status: 'completed', assistant_text: long });
    });

    t.test('session.close of an active session cancels the turn and answers closing', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const hold = provider.hold();
      provider.script(stream([hold]));
      const who = await controller(daemon, transport);
      const operation = op();
      resultOf(await startTurn(who, { prompt: 'go' }, operation));
      const lookup = await who.client.call(
        'operation.lookup',
        { operation_id: operation },
        { session: who.session, control: who.control },
      );
      t.match(lookup, { status: 'accepted', method: 'turn.start', result: { status: 'accepted' } });
      const closed = await who.client.call(
        'session.close',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      t.same(closed, { status: 'closing' });
      hold.release();
      const again = await daemon.connect(transport);
      // The turn's end is recorded, its operation settled, and only then is it no longer active.
      while (daemon.app.turns.isActive(who.session)) await new Promise((resolve) => setImmediate(resolve));
      const claim = await again.call('session.claim', {}, { session: who.session, operation: op() });
      t.match(claim.snapshot, { turn: null, terminal: { status: 'cancelled' } });
      const settled = await again.call(
        'operation.lookup',
        { operation_id: operation },
        { session: who.session, control: claim.control_token as string },
      );
      t.match(settled, { status: 'completed', result: { status: 'cancelled', application_manifest: null } });
    });

    t.test('a provider failure ends the turn with provider_error and fixed text', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      for (let i = 0; i < 6; i++) provider.replyStatus(400, { message: SECRET_WORDS });
      const who = await controller(daemon, transport);
      resultOf(await startTurn(who, { prompt: 'go' }));
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, {
        status: 'failed',
        error: { code: 'provider_error', message: 'the model provider failed' },
      });
      t.notMatch(who.client.received.join(''), SECRET_WORDS);
    });

    t.test('assistant text over its budget is refused before it is accepted, never cut', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      // A profile connection's turn carries `"application_manifest":null`, which the budget also pays for.
      const field = Buffer.byteLength(JSON.stringify({ application_manifest: null }));
      const fits = 'a'.repeat(PROFILE_LIMITS.assistant_text_bytes - field - 2 - 10);
      provider.reply([fits, 'b'.repeat(11)]);
      const who = await controller(daemon, transport);
      resultOf(await startTurn(who, { prompt: 'go' }));
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, {
        status: 'failed',
        error: { code: 'limit_exceeded' },
        assistant_text: fits,
      });
    });

    t.test('history records every turn without arguments, and replay shows them', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider
        .replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"very-private-argument"}' }])
        .reply(['ok']);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const call = await who.client.event('turn.application_tool_call');
      resultOf(await submitResult(who.client, who.session, executor, call));
      await who.client.event('turn.terminal');
      const replay = await who.client.call(
        'session.replay',
        { cursor: null, limit: 100 },
        { session: who.session },
      );
      const kinds = (replay.records as Array<{ kind: string }>).map((record) => record.kind);
      t.match(kinds, ['session.created', 'turn.user', 'turn.call', 'turn.call_result', 'turn.terminal']);
      t.notMatch(JSON.stringify(replay), 'very-private-argument');
    });
  });
}
