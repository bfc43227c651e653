import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { EventFrame } from '../../client/wire-client.js';
import { op } from '../helpers/daemon.js';
import { messagesToolUse } from '../helpers/messages-streams.js';
import { ResponsesStream } from '../helpers/responses-streams.js';
import { resultOf } from '../routes/session.resources.fixture.js';
import { startTurn } from '../routes/turn.fixture.js';
import { ANTHROPIC_KEY, OPENAI_KEY, providerApisDaemon } from './provider-apis-fixture.js';
import { WAIT_MS } from './seed-fixture.js';

/**
 * Reasoning over the native APIs, against the real binary: a Responses summary reaching the client as
 * `provider_reasoning_summary` activity, encrypted reasoning carried into the next round and nowhere else,
 * and Messages thinking signatures returned byte for byte.
 */

const ENCRYPTED = 'gAAAAABprocessEncryptedReasoning0f4c9a7b2e61d8ENDOFSECRET';
const SIGNATURE = 'EqQBCgIYAhIMprocessSignature7a1c+/=';
const THINKING = 'Hidden chain of thought about the drawer.';

/** Every byte the daemon keeps in its home's state folder (the history database and its journal). */
function stateBytes(home: string): Buffer {
  const folder = join(home, 'state');
  return Buffer.concat(readdirSync(folder).map((name) => readFileSync(join(folder, name))));
}

t.test('reasoning over Responses and Messages, end to end', async (t) => {
  const daemon = await providerApisDaemon(t);
  writeFileSync(join(daemon.workspace, 'README.md'), 'Tea is in the second drawer.\n');
  const { openai, anthropic } = daemon.apis;

  await t.test('a Responses summary reaches the client as provider_reasoning_summary activity', async (t) => {
    await daemon.select(openai.model);
    const who = await daemon.controller();
    openai.server.script(
      new ResponsesStream()
        .created()
        .reasoning('rs_summary', [['**Looking it up**\n\n', 'The drawer holds the tea.']], ENCRYPTED)
        .functionCall('fc_1', 'call_read', 'read_file', '{"path":"README.md"}')
        .completed(),
    );
    openai.server.script(new ResponsesStream().created().message('msg_1', ['Second drawer.']).completed());
    const operation = op();
    const accepted = resultOf<{ turn_id: string }>(
      await startTurn(who, { prompt: 'Where is the tea?' }, operation),
    );
    const terminal = await who.client.event('turn.terminal', WAIT_MS);
    t.match(terminal.payload, { status: 'completed', assistant_text: 'Second drawer.' });
    const activities = who.client.received
      .flatMap((text) => text.split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as EventFrame)
      .filter((frame) => frame.event === 'turn.activity')
      .map((frame) => frame.payload.activity);
    t.match(activities, [
      { kind: 'reasoning' },
      {
        kind: 'reasoning_summary',
        text: '**Looking it up**\n\nThe drawer holds the tea.',
        truncated: false,
        redacted: false,
      },
    ]);

    // The encrypted item went back to the provider, as it came, in the next round.
    const continuation = openai.server.requests.at(-1)!;
    t.ok(continuation.text.includes(`"encrypted_content":"${ENCRYPTED}"`));
    t.match(continuation.headers, {
      authorization: `Bearer ${OPENAI_KEY}`,
    });

    // And nowhere else: not in history, not in the log, not in a lookup, not on the wire.
    const replay = await who.client.call(
      'session.replay',
      { cursor: null, limit: 100 },
      { session: who.session },
    );
    const lookup = await who.client.call(
      'operation.lookup',
      { operation_id: operation },
      { session: who.session, control: who.control },
    );
    t.equal(lookup.status, 'completed');
    const shown = [JSON.stringify(replay), JSON.stringify(lookup), who.client.received.join('\n')].join('\n');
    t.notMatch(shown, ENCRYPTED, 'not replayed, looked up or sent to a client');
    t.ok(stateBytes(daemon.home).includes('Second drawer.'), 'the history database holds the turn');
    t.notOk(stateBytes(daemon.home).includes(ENCRYPTED), 'not in the history database');
    t.ok((daemon.magid.stdout + daemon.magid.stderr).length > 0, 'the daemon logged');
    t.notMatch(daemon.magid.stdout + daemon.magid.stderr, ENCRYPTED, 'not in the log, at debug level');
    t.notOk(stateBytes(daemon.home).includes('The drawer holds the tea.'), 'nor is a summary kept');
    t.equal(accepted.turn_id, terminal.payload.turn_id);
  });

  await t.test(
    'Messages thinking goes back with its signature byte for byte, and is never answer text',
    async (t) => {
      await daemon.select(anthropic.model);
      const who = await daemon.controller();
      anthropic.server.script(
        messagesToolUse([{ id: 'toolu_read', name: 'read_file', input: '{"path":"README.md"}' }], {
          thinking: { pieces: [THINKING.slice(0, 10), THINKING.slice(10)], signature: SIGNATURE },
        }),
      );
      anthropic.server.script(anthropic.text('Second drawer, again.'));
      resultOf(await startTurn(who, { prompt: 'And now?' }));
      const terminal = await who.client.event('turn.terminal', WAIT_MS);
      t.match(terminal.payload, { status: 'completed', assistant_text: 'Second drawer, again.' });
      const continuation = anthropic.server.requests.at(-1)!;
      t.ok(
        continuation.text.includes(
          JSON.stringify({ type: 'thinking', thinking: THINKING, signature: SIGNATURE }),
        ),
        'the thinking block as it came, its signature unchanged',
      );
      t.match(continuation.headers, {
        'x-api-key': ANTHROPIC_KEY,
        'anthropic-version': '2023-06-01',
      });
      const replay = await who.client.call(
        'session.replay',
        { cursor: null, limit: 100 },
        { session: who.session },
      );
      for (const secret of [THINKING, SIGNATURE]) {
        t.notMatch(JSON.stringify(replay) + who.client.received.join('\n'), secret, 'not shown');
        t.notOk(stateBytes(daemon.home).includes(secret), 'not kept');
        t.notMatch(daemon.magid.stdout + daemon.magid.stderr, secret, 'not logged');
      }
    },
  );
});
