import t from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { BUILTIN_LIMITS } from '../../core/agent/builtin-limits.js';
import { PROFILE_LIMITS, PROVIDER_LIMITS, SERVICE_LIMITS, WIRE_LIMITS } from '../../core/limits.js';
import { utf8ByteLength } from '../../core/resources/unicode.js';
import { TERMINAL_PAYLOAD_BYTES } from '../../core/turns/terminal-record.js';
import { TERMINAL_DATA_BYTES } from '../../core/turns/turn-history.js';
import { claimedSession, op } from '../helpers/daemon.js';

import { turnDaemon } from './turn.fixture.js';

const encodedBytes = (value: unknown) => utf8ByteLength(JSON.stringify(value));

/** Provider call ids at their longest, 128 bytes, numbered from 0 in each loop as a provider does. */
const providerId = (index: number) => `call_${index}_`.padEnd(PROFILE_LIMITS.provider_call_id_bytes, 'x');

/**
 * The largest plan a model can send: 32 steps of 256 characters, as many of them two-byte as the
 * arguments bound leaves room for.
 */
function largestPlanArguments(): { text: string; steps: Array<{ step: string; status: string }> } {
  const texts = Array.from({ length: BUILTIN_LIMITS.plan_steps }, () =>
    Array.from({ length: BUILTIN_LIMITS.plan_step_chars }, () => 'a'),
  );
  const steps = () => texts.map((text) => ({ step: text.join(''), status: 'in_progress' }));
  let room = PROFILE_LIMITS.argument_bytes - utf8ByteLength(JSON.stringify({ steps: steps() }));
  for (const text of texts) {
    for (let i = 0; i < text.length && room > 0; i++, room--) text[i] = 'é';
  }
  return { text: JSON.stringify({ steps: steps() }), steps: steps() };
}

const listing = (index: number) => ({
  id: providerId(index),
  name: 'list_directory',
  arguments: '{"path":"."}',
});

interface ReplayedRecord {
  kind: string;
  omitted: boolean;
  data: Record<string, unknown> | null;
}

/** Every record of the session, page by page, and the largest page's encoded result. */
async function replayAll(client: WireClient, session: string) {
  const records: ReplayedRecord[] = [];
  let largestPage = 0;
  let cursor: string | null = null;
  do {
    const page = await client.call(
      'session.replay',
      { cursor, limit: SERVICE_LIMITS.page_limit_max },
      { session },
    );
    largestPage = Math.max(largestPage, encodedBytes(page));
    records.push(...(page.records as ReplayedRecord[]));
    cursor = page.next_cursor as string | null;
  } while (cursor !== null);
  return { records, largestPage };
}

t.test(
  'the largest terminal a turn makes replays whole: 128 built-in calls, a subagent, the largest plan and answer',
  async (t) => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    t.teardown(() => process.off('warning', onWarning));
    const { daemon, provider } = await turnDaemon(t);
    const plan = largestPlanArguments();
    t.ok(utf8ByteLength(plan.text) <= PROFILE_LIMITS.argument_bytes);
    const rounds = PROVIDER_LIMITS.tool_calls_per_round;
    // The turn's first round: the plan, a subagent and list_directory calls, as many as one round takes.
    provider.replyToolCalls([
      { id: providerId(0), name: 'update_plan', arguments: plan.text },
      { id: providerId(1), name: 'spawn_agent', arguments: '{"task":"List the workspace again and again."}' },
      ...Array.from({ length: rounds - 2 }, (_, i) => listing(i + 2)),
    ]);
    // The subagent's rounds: 32 calls of its own, numbered from 0 again, then its answer.
    provider.replyToolCalls(Array.from({ length: 32 }, (_, i) => listing(i)));
    provider.reply(['Listed.']);
    // The turn's second round: the last 32 calls the turn may make, and one more.
    provider.replyToolCalls(Array.from({ length: 33 }, (_, i) => listing(rounds + i)));
    // The answer at its budget, in quotes that take two bytes each once encoded, then a delta too many.
    const answer = '"'.repeat((PROFILE_LIMITS.assistant_text_bytes - 2) / 2);
    provider.reply([...answer.match(/.{1,1000}/gs)!, 'x']);

    const client = await daemon.connect('socket', []);
    const { session, control } = await claimedSession(client, daemon.workspace);
    const operation = op();
    await client.call(
      'turn.start',
      { prompt: 'Plan, then list the workspace.' },
      { session, control, operation },
    );
    // 128 calls, each durable before and after it runs, take a while on a loaded machine.
    const live = (await client.event('turn.terminal', 120_000)).payload as Record<string, unknown>;
    t.match(live, {
      status: 'failed',
      error: { code: 'limit_exceeded' },
      assistant_text: answer,
      activity_dropped: 0,
    });
    t.equal(encodedBytes(live.assistant_text), PROFILE_LIMITS.assistant_text_bytes, 'the whole budget');
    t.ok(encodedBytes(live) <= TERMINAL_PAYLOAD_BYTES, 'the live payload within its bound');
    t.ok(encodedBytes(live) <= WIRE_LIMITS.payload_bytes);
    const lastRound = provider.requests[4]!.body.messages.filter(
      (message: { role: string }) => message.role === 'tool',
    );
    t.match(
      JSON.parse(lastRound.at(-1).content),
      { error: { code: 'call_limit' } },
      'the 129th call refused',
    );
    t.same(warnings, [], 'its calls waiting together on the turn warn of no leak');

    const { records, largestPage } = await replayAll(client, session);
    t.ok(largestPage <= WIRE_LIMITS.payload_bytes, 'every page fits a payload');
    const bindings = records.filter((record) => record.kind === 'turn.call').map((record) => record.data!);
    t.equal(bindings.length, BUILTIN_LIMITS.calls_per_turn, '128 calls bound');
    const spawn = bindings.find((binding) => binding.name === 'spawn_agent')!;
    t.equal(
      bindings.filter((binding) => binding.parent_call_id === spawn.call_id).length,
      32,
      'a subagent’s 32',
    );
    const terminal = records.find((record) => record.kind === 'turn.terminal')!;
    t.equal(terminal.omitted, false, 'the terminal replays whole');
    const data = terminal.data as Record<string, unknown> & {
      calls: Array<{ call_id: string; tool: string; external_effects: string }>;
      calls_omitted?: number;
      plan: Array<{ step: string; status: string }>;
      plan_omitted?: number;
    };
    t.ok(
      encodedBytes(data) <= TERMINAL_DATA_BYTES,
      `${encodedBytes(data)} bytes within ${TERMINAL_DATA_BYTES}`,
    );
    t.same(
      Object.fromEntries(Object.keys(live).map((name) => [name, data[name]])),
      live,
      'its payload is the live terminal’s, member for member',
    );
    t.same(
      Object.keys(data).filter((name) => !(name in live)),
      ['calls', 'calls_omitted', 'plan', 'plan_omitted'],
    );
    t.equal(
      data.calls.length + data.calls_omitted!,
      BUILTIN_LIMITS.calls_per_turn,
      'each call kept or counted',
    );
    t.equal(data.calls.length, 0, 'every call’s outcome is recorded: they are left out first');
    t.ok(data.plan.length > 0, 'the plan’s first steps are kept');
    t.same(data.plan, plan.steps.slice(0, data.plan.length));
    t.equal(data.plan.length + data.plan_omitted!, BUILTIN_LIMITS.plan_steps);
    const results = records.filter((record) => record.kind === 'turn.call_result');
    t.equal(results.length, BUILTIN_LIMITS.calls_per_turn, 'and each left-out call has its outcome recorded');

    const lookup = await client.call('operation.lookup', { operation_id: operation }, { session, control });
    t.same(lookup.result, live, 'operation.lookup holds the live terminal');
    t.ok(encodedBytes(lookup) <= WIRE_LIMITS.payload_bytes);
    const profile = await daemon.connect('socket');
    const claimed = await profile.call('session.claim', {}, { session, operation: op() });
    const snapshot = claimed.snapshot as { terminal: Record<string, unknown> };
    t.same(
      snapshot.terminal,
      { ...live, application_manifest: null },
      'as does a profile connection’s claim',
    );
    t.ok(encodedBytes(snapshot.terminal) <= TERMINAL_PAYLOAD_BYTES);
    t.ok(encodedBytes(claimed) <= WIRE_LIMITS.payload_bytes);
  },
);
