import t, { type Test } from 'tap';
import type { EventFrame, WireClient } from '../../client/wire-client.js';
import { ERROR_MESSAGES } from '../../core/errors.js';
import { QUIRKS } from '../helpers/provider-streams.js';
import {
  type Controller,
  controller,
  listed,
  registered,
  resultOf,
  toolResource,
} from './session.resources.fixture.js';
import { confirmedExecutor, type Executor, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

type Quirk = keyof typeof QUIRKS;

/**
 * Quirks that answer with text: the assistant text the turn must end with, and reasoning the answer
 * must never show.
 */
const TEXT_QUIRKS: Partial<Record<Quirk, { text: string; reasoning: string[] }>> = {
  reasoningFields: { text: 'Answer.', reasoning: ['Think', 'More.'] },
  thinkTagsInContent: { text: 'Hello <b>world</b>', reasoning: ['Plan it.', 'think>'] },
  emptyFirstChunks: { text: 'Hi', reasoning: [] },
  crlfCommentsMultiline: { text: 'Hello', reasoning: [] },
  finalUsage: { text: 'Hi', reasoning: [] },
  noDone: { text: 'Hi', reasoning: [] },
};

interface ExpectedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The provider's call id, or null when the daemon must make one up (`call_` + 22 base64url). */
  id: string | null;
}

const PARIS = { location: 'Paris' };

/** Quirks that call tools: every call the stream makes, in order, as the executor must receive it. */
const TOOL_QUIRKS: Partial<Record<Quirk, { calls: ExpectedCall[]; reasoning: string[] }>> = {
  llamaCppPythonToolCall: {
    calls: [
      {
        name: 'get_weather',
        arguments: PARIS,
        id: 'call__0_get_weather_cmpl-8e3c5c1e-6a2b-4bd5-9e0a-2f1f6c1d9a77',
      },
    ],
    reasoning: [],
  },
  ollamaParallelCalls: {
    calls: [
      { name: 'get_weather', arguments: PARIS, id: 'call_a' },
      { name: 'get_weather', arguments: { location: 'Oslo' }, id: 'call_b' },
    ],
    reasoning: ['Two cities.'],
  },
  wholeCallsWithoutIndex: {
    calls: [
      { name: 'get_weather', arguments: PARIS, id: 'call_1' },
      { name: 'get_time', arguments: {}, id: 'call_2' },
    ],
    reasoning: [],
  },
  objectArguments: { calls: [{ name: 'get_weather', arguments: PARIS, id: 'call_o' }], reasoning: [] },
  placeholderArguments: { calls: [{ name: 'get_weather', arguments: PARIS, id: 'call_p' }], reasoning: [] },
  missingId: { calls: [{ name: 'get_weather', arguments: PARIS, id: null }], reasoning: [] },
  duplicateAndBlankIds: {
    calls: [
      { name: 'get_weather', arguments: PARIS, id: 'call_0' },
      { name: 'get_time', arguments: {}, id: null },
      { name: 'get_date', arguments: {}, id: null },
    ],
    reasoning: [],
  },
  lateNameAndType: { calls: [{ name: 'get_weather', arguments: PARIS, id: 'call_l' }], reasoning: [] },
  stopWithToolCalls: { calls: [{ name: 'get_weather', arguments: PARIS, id: 'call_s' }], reasoning: [] },
};

/**
 * Quirks that are failures: the text the turn accepted before the failure, and the provider's own words,
 * which must never reach a client.
 */
const FAILURE_QUIRKS: Partial<Record<Quirk, { text: string; secret: string | null }>> = {
  truncated: { text: 'Hi there', secret: null },
  emptyBody: { text: '', secret: null },
  inBandError: { text: 'Hi', secret: 'scripted in-band failure' },
  finishReasonError: { text: 'Hi', secret: 'upstream' },
  errorEvent: { text: '', secret: 'scripted event failure' },
  errorField: { text: 'Hi', secret: 'scripted field failure' },
};

/** The tools the quirks call, each with the input schema its arguments satisfy and an empty output. */
const CONTRACTS: Record<string, string> = {
  get_weather: contract({ location: { type: 'string', maxLength: 100 } }, ['location']),
  get_time: contract({}, []),
  get_date: contract({}, []),
};

function contract(properties: Record<string, unknown>, required: string[]): string {
  const empty = { type: 'object', properties: {}, required: [], additionalProperties: false };
  return JSON.stringify({
    input_schema: { type: 'object', properties, required, additionalProperties: false },
    output_schema: empty,
    timeout_ms: 120_000,
  });
}

const GENERATED_ID = /^call_[A-Za-z0-9_-]{22}$/;
const FOLLOW_UP = 'It is sunny.';

/** The frames `client` received, parsed, in order. */
function frames(
  client: WireClient,
): Array<{ type: string; event?: string; payload?: Record<string, unknown> }> {
  return client.received.flatMap((text) => text.split('\n').filter(Boolean)).map((line) => JSON.parse(line));
}

function deltas(client: WireClient): string {
  return frames(client)
    .filter((frame) => frame.event === 'turn.assistant_delta')
    .map((frame) => frame.payload?.delta as string)
    .join('');
}

/** Whether a `turn.activity` of kind `reasoning` arrived. */
function reasoned(client: WireClient): boolean {
  return frames(client).some(
    (frame) =>
      frame.event === 'turn.activity' &&
      (frame.payload?.activity as { kind?: string } | undefined)?.kind === 'reasoning',
  );
}

/** A controller holding an executor, with exactly the tools `names` registered, and the selection of them. */
async function toolSession(
  t: Test,
  names: readonly string[],
): Promise<{
  who: Controller;
  executor: Executor;
  application: Record<string, unknown>;
  provider: Awaited<ReturnType<typeof turnDaemon>>['provider'];
}> {
  const { daemon, provider } = await turnDaemon(t);
  const who = await controller(daemon, 'in-process');
  const executor = await confirmedExecutor(who.client);
  const authorizations = [];
  for (const name of names) {
    const { entry } = await registered(who, toolResource(name, { content: CONTRACTS[name] }));
    authorizations.push({
      resource_id: entry.resource_id,
      revision_id: entry.revision_id,
      revision_sha256: entry.revision_sha256,
    });
  }
  const listing = await listed(who);
  return {
    who,
    executor,
    provider,
    application: {
      expected_registry_revision: listing.registry_revision,
      executor_id: executor.executor_id,
      executor_generation: executor.executor_generation,
      tool_authorizations: authorizations,
    },
  };
}

t.test('every ready-made quirk stream is classified here', async (t) => {
  const classified = [
    ...Object.keys(TEXT_QUIRKS),
    ...Object.keys(TOOL_QUIRKS),
    ...Object.keys(FAILURE_QUIRKS),
  ].sort();
  t.strictSame(classified, Object.keys(QUIRKS).sort(), 'each quirk once, none left out');
});

/** A turn with no application whose one provider answer is `quirk`, run to its terminal. */
async function quirkTurn(t: Test, quirk: Quirk) {
  const { daemon, provider } = await turnDaemon(t);
  provider.script(QUIRKS[quirk]());
  const who = await controller(daemon, 'in-process');
  const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'Say hello' }));
  const terminal = await who.client.event('turn.terminal');
  return { provider, who, accepted, terminal };
}

t.test('text quirks: the turn completes with the answer text, never the reasoning', async (t) => {
  for (const [quirk, expected] of Object.entries(TEXT_QUIRKS)) {
    t.test(quirk, async (t) => {
      const { provider, who, accepted, terminal } = await quirkTurn(t, quirk as Quirk);
      t.strictSame(terminal.payload, {
        turn_id: accepted.turn_id,
        status: 'completed',
        error: null,
        assistant_text: expected.text,
        activity_dropped: 0,
        application_manifest: null,
      });
      t.equal(deltas(who.client), expected.text, 'the deltas make the same text');
      const seen = who.client.received.join('\n');
      for (const reasoning of expected.reasoning) t.notMatch(seen, reasoning, `never shows "${reasoning}"`);
      if (expected.reasoning.length > 0) {
        t.ok(reasoned(who.client), 'reasoning shows only as activity');
      }
      t.equal(provider.requests.length, 1, 'one request');
      t.equal(provider.unexpected, 0);
    });
  }
});

t.test(
  'tool call quirks: each call is dispatched once with its arguments, then the turn completes',
  async (t) => {
    for (const [quirk, expected] of Object.entries(TOOL_QUIRKS)) {
      t.test(quirk, async (t) => {
        const names = [...new Set(expected.calls.map((call) => call.name))];
        const { who, executor, application, provider } = await toolSession(t, names);
        provider.script(QUIRKS[quirk as Quirk]()).reply([FOLLOW_UP]);
        const accepted = resultOf<{ turn_id: string }>(
          await startTurn(who, { prompt: 'Weather?', application }),
        );
        const dispatched: EventFrame[] = [];
        for (const _ of expected.calls) {
          const call = await who.client.event('turn.application_tool_call');
          dispatched.push(call);
          t.equal(
            resultOf<{ status: string }>(await submitResult(who.client, who.session, executor, call)).status,
            'accepted',
          );
        }
        const terminal = await who.client.event('turn.terminal');
        t.match(terminal.payload, {
          turn_id: accepted.turn_id,
          status: 'completed',
          error: null,
          assistant_text: FOLLOW_UP,
        });
        t.equal(
          frames(who.client).filter((frame) => frame.event === 'turn.application_tool_call').length,
          expected.calls.length,
          'exactly one dispatch per call',
        );
        t.strictSame(
          dispatched.map((call) => ({ name: call.payload.name, arguments: call.payload.arguments })),
          expected.calls.map((call) => ({ name: call.name, arguments: call.arguments })),
          'the calls, in order, with their arguments',
        );
        const ids = dispatched.map((call) => call.payload.provider_call_id as string);
        expected.calls.forEach((call, index) => {
          if (call.id === null) t.match(ids[index], GENERATED_ID, `call ${index} gets an id from the daemon`);
          else t.equal(ids[index], call.id, `call ${index} keeps its id`);
        });
        t.equal(new Set(ids).size, ids.length, 'provider call ids are distinct');
        t.equal(new Set(dispatched.map((call) => call.payload.call_id)).size, ids.length, 'and call ids');
        const seen = who.client.received.join('\n');
        for (const reasoning of expected.reasoning) t.notMatch(seen, reasoning, `never shows "${reasoning}"`);
        if (expected.reasoning.length > 0) {
          t.ok(reasoned(who.client), 'reasoning shows only as activity');
        }

        t.equal(provider.requests.length, 2, 'the calls, then the answer');
        t.equal(provider.unexpected, 0);
        const { messages } = provider.requests[1]!.body as { messages: Array<Record<string, unknown>> };
        const [assistant, ...results] = messages.slice(-1 - ids.length);
        const replayed = (assistant?.tool_calls ?? []) as Array<{
          id: string;
          type: string;
          function: { name: string; arguments: string };
        }>;
        t.match(assistant, { role: 'assistant', content: '' }, 'the continuation replays the calls');
        t.strictSame(
          replayed.map((call) => ({
            id: call.id,
            type: call.type,
            name: call.function.name,
            arguments: JSON.parse(call.function.arguments),
          })),
          expected.calls.map((call, index) => ({
            id: ids[index],
            type: 'function',
            name: call.name,
            arguments: call.arguments,
          })),
          'under the ids the executor saw, with the same arguments',
        );
        t.strictSame(
          results,
          ids.map((id) => ({ role: 'tool', tool_call_id: id, content: '{}' })),
          'each followed by its result',
        );
      });
    }
  },
);

t.test('failure quirks: the turn fails with provider_error and the fixed message', async (t) => {
  for (const [quirk, expected] of Object.entries(FAILURE_QUIRKS)) {
    t.test(quirk, async (t) => {
      const { provider, who, accepted, terminal } = await quirkTurn(t, quirk as Quirk);
      t.strictSame(terminal.payload, {
        turn_id: accepted.turn_id,
        status: 'failed',
        error: { code: 'provider_error', message: ERROR_MESSAGES.provider_error },
        assistant_text: expected.text,
        activity_dropped: 0,
        application_manifest: null,
      });
      t.equal(deltas(who.client), expected.text, 'only the text streamed before the failure');
      if (expected.secret !== null) {
        t.notMatch(
          who.client.received.join('\n'),
          expected.secret,
          "the provider's words never reach the client",
        );
      }
      t.equal(provider.requests.length, 1, 'never retried once the server answered 200');
      t.equal(provider.unexpected, 0);
    });
  }
});
