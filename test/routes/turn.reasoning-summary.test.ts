import t, { type Test } from 'tap';
import type { EventFrame, WireClient } from '../../client/wire-client.js';
import { TURN_LIMITS } from '../../core/limits.js';
import { utf8ByteLength } from '../../core/resources/unicode.js';
import {
  claimedSession,
  op,
  startDaemon,
  type TestDaemon,
  TRANSPORTS,
  type Transport,
} from '../helpers/daemon.js';
import { chunk, done, sse, stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';

const CAPABILITY = 'provider_reasoning_summary';
const SECRET = 'sk-summary-secret-0123456789';

interface SummaryDaemon {
  daemon: TestDaemon;
  provider: ScriptedProvider;
}

/** A daemon whose config says, or does not say, that the provider sends documented reasoning summaries. */
async function summaryDaemon(t: Test, reasoningSummary: boolean): Promise<SummaryDaemon> {
  const provider = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    config: { provider: { reasoning_summary: reasoningSummary } },
  });
  return { daemon, provider };
}

/** A summary streamed as OpenRouter streams one (in `reasoning` and in a summary detail), then an answer. */
function summaryThenAnswer(provider: ScriptedProvider, fragments: readonly string[]): void {
  provider.script(
    stream([
      sse(chunk({ role: 'assistant', content: '' })),
      ...fragments.map((text) =>
        sse(
          chunk({
            reasoning: text,
            reasoning_details: [
              { type: 'reasoning.summary', summary: text, format: 'openai-responses-v1', index: 0 },
            ],
          }),
        ),
      ),
      sse(chunk({ content: 'Answer.' })),
      sse(chunk({}, { finishReason: 'stop' })),
      done(),
    ]),
  );
}

/** Runs a turn on a new session of `client` and returns every event of it, in order. */
async function turnEvents(t: Test, client: WireClient, workspace: string): Promise<EventFrame[]> {
  const { session, control } = await claimedSession(client, workspace);
  await client.call('turn.start', { prompt: 'Find my notes' }, { session, control, operation: op() });
  const terminal = await client.event('turn.terminal');
  const events = [...client.pendingEvents.filter((frame) => frame.session_id === session), terminal];
  const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
  t.notMatch(JSON.stringify(replay), 'Checking', 'a summary is never written to history');
  return events;
}

const activities = (events: EventFrame[]) =>
  events.filter((frame) => frame.event === 'turn.activity').map((frame) => frame.payload.activity);

async function connected(daemon: TestDaemon, transport: Transport, capabilities: string[]) {
  const client = await daemon.open(transport);
  const init = await client.initialize(capabilities);
  return { client, init };
}

for (const transport of TRANSPORTS) {
  t.test(`reasoning summaries (${transport})`, async (t) => {
    t.test('with the configuration the capability is offered, with its bound', async (t) => {
      const { daemon } = await summaryDaemon(t, true);
      const { client, init } = await connected(daemon, transport, [CAPABILITY, 'application_resources_v1']);
      t.same(init.negotiated_capabilities, ['application_resources_v1', CAPABILITY]);
      t.same((init.capabilities as Record<string, unknown>).provider_reasoning_summary, {
        summary_bytes: TURN_LIMITS.reasoning_summary_bytes,
      });
      const again = await client.call('capabilities');
      t.same(again.capabilities, init.capabilities);
      const plain = await connected(daemon, transport, []);
      t.notOk('provider_reasoning_summary' in (plain.init.capabilities as object));
    });

    t.test('without the configuration the capability is not offered', async (t) => {
      const { daemon } = await summaryDaemon(t, false);
      const { init } = await connected(daemon, transport, [CAPABILITY]);
      t.same(init.negotiated_capabilities, []);
      t.notOk('provider_reasoning_summary' in (init.capabilities as object));
    });

    t.test('a documented summary is shown as activity to a controller that negotiated it', async (t) => {
      const { daemon, provider } = await summaryDaemon(t, true);
      const { client } = await connected(daemon, transport, [CAPABILITY]);
      summaryThenAnswer(provider, ['**Checking**', ' the notes']);
      const events = await turnEvents(t, client, daemon.workspace);
      t.same(activities(events), [
        { kind: 'reasoning' },
        { kind: 'reasoning_summary', text: '**Checking** the notes', truncated: false, redacted: false },
      ]);
      t.same(
        events.map((frame) => frame.sequence),
        [0, 1, 2, 3, 4],
        'in order before the answer, without a gap',
      );
      t.equal(events[3]?.event, 'turn.assistant_delta');
      t.match(events.at(-1)?.payload, {
        status: 'completed',
        assistant_text: 'Answer.',
        activity_dropped: 0,
      });
    });

    t.test('a controller that did not negotiate it never sees one, and no gap is left', async (t) => {
      const { daemon, provider } = await summaryDaemon(t, true);
      const { client } = await connected(daemon, transport, ['application_resources_v1']);
      summaryThenAnswer(provider, ['**Checking**', ' the notes']);
      const events = await turnEvents(t, client, daemon.workspace);
      t.same(activities(events), [{ kind: 'reasoning' }]);
      t.same(
        events.map((frame) => frame.sequence),
        [0, 1, 2, 3],
      );
      t.match(events.at(-1)?.payload, { status: 'completed', activity_dropped: 0 });
    });

    t.test('without the configuration summary details are not read', async (t) => {
      const { daemon, provider } = await summaryDaemon(t, false);
      const { client } = await connected(daemon, transport, [CAPABILITY]);
      summaryThenAnswer(provider, ['**Checking**', ' the notes']);
      t.same(activities(await turnEvents(t, client, daemon.workspace)), [{ kind: 'reasoning' }]);
    });

    t.test('generic thinking text is never a summary', async (t) => {
      const { daemon, provider } = await summaryDaemon(t, true);
      const { client } = await connected(daemon, transport, [CAPABILITY]);
      provider.script(
        stream([
          sse(chunk({ reasoning_content: 'Checking the notes', reasoning: 'Checking the notes' })),
          sse(chunk({ reasoning_details: [{ type: 'reasoning.text', text: 'Checking more', index: 0 }] })),
          sse(chunk({ content: '<think>Checking again</think>Answer.' })),
          sse(chunk({}, { finishReason: 'stop' })),
          done(),
        ]),
      );
      t.same(activities(await turnEvents(t, client, daemon.workspace)), [{ kind: 'reasoning' }]);
    });

    t.test(
      'a summary past its byte bound is cut and marked; credential-looking text is removed',
      async (t) => {
        const { daemon, provider } = await summaryDaemon(t, true);
        const { client } = await connected(daemon, transport, [CAPABILITY]);
        summaryThenAnswer(provider, [
          `Checking with ${SECRET} `,
          '日'.repeat(TURN_LIMITS.reasoning_summary_bytes),
        ]);
        const [, summary] = activities(await turnEvents(t, client, daemon.workspace)) as Array<
          Record<string, unknown>
        >;
        t.match(summary, { kind: 'reasoning_summary', truncated: true, redacted: true });
        const text = String(summary?.text);
        t.ok(text.startsWith('Checking with [redacted] 日'));
        t.ok(utf8ByteLength(text) <= TURN_LIMITS.reasoning_summary_bytes);
        t.ok(
          utf8ByteLength(text) > TURN_LIMITS.reasoning_summary_bytes - 3,
          'cut at the last whole character',
        );
        t.notMatch(JSON.stringify(summary), SECRET);
      },
    );
  });
}
