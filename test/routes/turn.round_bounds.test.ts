import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { PROVIDER_LIMITS } from '../../core/limits.js';
import { startDaemon } from '../helpers/daemon.js';
import {
  type ScriptedCall,
  type ScriptedResponse,
  type Step,
  toolCallStream,
} from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

/**
 * The bounds of what one provider round carries, at the scale real providers stream it: arguments a few
 * characters an event, each event framed in a chunk of its own, and rounds with more calls than a round
 * runs. Each goes through a whole turn.
 */

interface ToolMessage {
  role: string;
  tool_call_id?: string;
  content: string;
}

async function scene(t: Test) {
  const provider = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    config: { tools: { enabled: ['write_file'] } },
  });
  return { daemon, provider };
}

/**
 * The same bytes in writes of up to `bytes` each: a stream of a hundred thousand events is played in a few
 * hundred writes, as a socket would carry it anyway.
 */
function coalesced(response: ScriptedResponse, bytes = 1 << 16): ScriptedResponse {
  const steps: Step[] = [];
  let pending: Buffer[] = [];
  let size = 0;
  const flush = () => {
    if (size > 0) steps.push({ kind: 'write', bytes: Buffer.concat(pending) });
    pending = [];
    size = 0;
  };
  for (const step of response.steps) {
    if (step.kind !== 'write') {
      flush();
      steps.push(step);
      continue;
    }
    pending.push(step.bytes);
    size += step.bytes.byteLength;
    if (size >= bytes) flush();
  }
  flush();
  return { ...response, steps };
}

function streamedCalls(calls: readonly ScriptedCall[], fragment: number): ScriptedResponse {
  return coalesced(toolCallStream(calls, { fragment }));
}

function toolMessages(body: { messages: ToolMessage[] }): ToolMessage[] {
  return body.messages.filter((message) => message.role === 'tool');
}

const MAX_WRITE = 262_144;

t.test(
  'a write of 262,144 quotes streamed five characters an event completes, far past 16 MiB of stream',
  async (t) => {
    const { daemon, provider } = await scene(t);
    const content = '"'.repeat(MAX_WRITE);
    const args = JSON.stringify({ path: 'quotes.txt', content });
    const response = streamedCalls([{ id: 'w1', name: 'write_file', arguments: args }], 5);
    const streamBytes = response.steps.reduce(
      (sum, step) => sum + (step.kind === 'write' ? step.bytes.byteLength : 0),
      0,
    );
    t.ok(streamBytes > 16 * 1024 * 1024, `the stream takes ${streamBytes} bytes`);
    t.ok(streamBytes <= PROVIDER_LIMITS.response_bytes);
    provider.script(response);
    provider.reply(['Written.']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'Write the quotes.' }));
    t.match((await who.client.event('turn.terminal', 120_000)).payload, { status: 'completed' });
    t.equal(readFileSync(join(daemon.workspace, 'quotes.txt'), 'utf8'), content);
    t.same(JSON.parse(toolMessages(provider.requests[1]!.body)[0]!.content), {
      bytes: MAX_WRITE,
      created: true,
    });
  },
);

t.test('131,072 é streamed five characters an event, as written and as \\u escapes, completes', async (t) => {
  const { daemon, provider } = await scene(t);
  const content = 'é'.repeat(MAX_WRITE / 2);
  const written = JSON.stringify({ path: 'plain.txt', content });
  const escaped = JSON.stringify({ path: 'escaped.txt', content: '@' }).replace(
    '@',
    '\\u00e9'.repeat(MAX_WRITE / 2),
  );
  t.equal(JSON.parse(escaped).content, content);
  provider.script(
    streamedCalls(
      [
        { id: 'w1', name: 'write_file', arguments: written },
        { id: 'w2', name: 'write_file', arguments: escaped },
      ],
      5,
    ),
  );
  provider.reply(['Written.']);
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Write the accents.' }));
  t.match((await who.client.event('turn.terminal', 120_000)).payload, { status: 'completed' });
  for (const name of ['plain.txt', 'escaped.txt']) {
    t.equal(readFileSync(join(daemon.workspace, name), 'utf8'), content, name);
  }
  t.same(
    toolMessages(provider.requests[1]!.body).map((message) => JSON.parse(message.content)),
    [
      { bytes: MAX_WRITE, created: true },
      { bytes: MAX_WRITE, created: true },
    ],
  );
});

t.test(
  "a call whose arguments pass 4 MiB fails as that call: the round's other call runs, the turn goes on",
  async (t) => {
    const { daemon, provider } = await scene(t);
    const huge = JSON.stringify({ path: 'huge.txt', content: '\u0001'.repeat(700_000) });
    t.ok(Buffer.byteLength(huge) > PROVIDER_LIMITS.call_argument_bytes);
    const small = JSON.stringify({ path: 'small.txt', content: 'tea' });
    provider.script(
      streamedCalls(
        [
          { id: 'big', name: 'write_file', arguments: huge },
          { id: 'ok', name: 'write_file', arguments: small },
        ],
        4_096,
      ),
    );
    provider.reply(['One of them.']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'Write both.' }));
    t.match((await who.client.event('turn.terminal', 120_000)).payload, { status: 'completed' });
    t.notOk(existsSync(join(daemon.workspace, 'huge.txt')));
    t.equal(readFileSync(join(daemon.workspace, 'small.txt'), 'utf8'), 'tea');
    const continuation = provider.requests[1]!.body;
    const [refused, ran] = toolMessages(continuation);
    t.match(refused, { tool_call_id: 'big' });
    t.match(JSON.parse(refused!.content), { error: { code: 'invalid_arguments' } });
    t.same(JSON.parse(ran!.content), { bytes: 3, created: true });
    const assistant = continuation.messages.find((message: { role: string }) => message.role === 'assistant');
    t.same(
      assistant.tool_calls.map((call: { function: { arguments: string } }) => call.function.arguments),
      ['{}', small],
      'the refused call is replayed with empty arguments',
    );
  },
);

t.test('a round of 80 calls: 64 run, each of the other 16 gets an error, and the turn goes on', async (t) => {
  const { daemon, provider } = await scene(t);
  for (let i = 0; i < 80; i++) writeFileSync(join(daemon.workspace, `f${i}.txt`), `file ${i}`);
  const calls = Array.from({ length: 80 }, (_, i) => ({
    id: `call_${i}`,
    name: 'read_file',
    arguments: JSON.stringify({ path: `f${i}.txt` }),
  }));
  provider.replyToolCalls(calls);
  provider.reply(['Read them.']);
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Read all.' }));
  t.match((await who.client.event('turn.terminal', 120_000)).payload, { status: 'completed' });
  const messages = toolMessages(provider.requests[1]!.body);
  t.same(
    messages.map((message) => message.tool_call_id),
    calls.map((call) => call.id),
    'one tool message per call, in order',
  );
  messages.slice(0, 64).forEach((message, i) => {
    t.equal(JSON.parse(message.content).content, `file ${i}`);
  });
  for (const message of messages.slice(64)) {
    t.same(JSON.parse(message.content), {
      error: {
        code: 'too_many_calls',
        message: 'the round asked for more calls than the daemon runs in one round; this one did not run',
      },
    });
  }
});
