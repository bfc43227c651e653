import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { EventFrame } from '../../client/wire-client.js';
import { hashedId } from '../../core/turns/call-dispatcher.js';
import { TRANSPORTS } from '../helpers/daemon.js';
import { codeOf, resultOf } from './session.resources.fixture.js';
import { applicationSession, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

interface ChatMessage {
  role: string;
  content: string;
  tool_call_id?: string;
}

for (const transport of TRANSPORTS) {
  t.test(
    `a subagent numbers its calls afresh: the parent's call_0 and the child's call_0 both run, kept apart (${transport})`,
    async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      writeFileSync(join(daemon.workspace, 'README.md'), 'tea\n');
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([
        { id: 'call_0', name: 'spawn_agent', arguments: '{"task":"Look around."}' },
        { id: 'call_1', name: 'lookup', arguments: '{"path":"tea"}' },
      ]);
      // The subagent's own rounds, numbered by the provider from call_0 again.
      provider.replyToolCalls([
        { id: 'call_0', name: 'list_directory', arguments: '{"path":"."}' },
        { id: 'call_1', name: 'read_file', arguments: '{"path":"README.md"}' },
      ]);
      provider.reply(['It holds README.md.']);
      // Back in the turn's loop, call_0 is taken.
      provider.replyToolCalls([{ id: 'call_0', name: 'read_file', arguments: '{"path":"README.md"}' }]);
      provider.reply(['Done.']);
      const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go', application }));
      const applicationCall: EventFrame = await who.client.event('turn.application_tool_call');
      t.equal(applicationCall.payload.provider_call_id, 'call_1');
      t.equal(codeOf(await submitResult(who.client, who.session, executor, applicationCall)), 'ok');
      t.match((await who.client.event('turn.terminal')).payload, {
        status: 'completed',
        assistant_text: 'Done.',
      });

      const [, childFirst, , parentSecond, parentThird] = provider.requests;
      const toolMessages = (body: { messages: ChatMessage[] }) =>
        body.messages.filter((message) => message.role === 'tool');
      const childResults = toolMessages(provider.requests[2]!.body);
      t.same(
        childResults.map((message) => message.tool_call_id),
        ['call_0', 'call_1'],
      );
      t.match(
        JSON.parse(childResults[0]!.content),
        { entries: [{ name: 'README.md' }] },
        "the child's call_0 ran",
      );
      t.match(JSON.parse(childResults[1]!.content), { content: 'tea\n' }, "the child's call_1 ran");
      t.notMatch(childFirst!.text, '"lookup"', 'the subagent has no application tool');
      const parentResults = toolMessages(parentSecond!.body);
      t.same(JSON.parse(parentResults.find((message) => message.tool_call_id === 'call_0')!.content), {
        answer: 'It holds README.md.',
        truncated: false,
      });
      t.same(JSON.parse(parentResults.find((message) => message.tool_call_id === 'call_1')!.content), {});
      const repeated = toolMessages(parentThird!.body).at(-1)!;
      t.equal(repeated.tool_call_id, 'call_0');
      t.match(
        JSON.parse(repeated.content),
        { error: { code: 'invalid_call_id' } },
        'repeated in its own loop',
      );

      const replay = await who.client.call(
        'session.replay',
        { cursor: null, limit: 100 },
        { session: who.session },
      );
      // biome-ignore lint/suspicious/noExplicitAny: records are read member by member
      const records = replay.records as Array<{ kind: string; data: Record<string, any> }>;
      const bindings = records.filter((record) => record.kind === 'turn.call').map((record) => record.data);
      const spawn = bindings.find((binding) => binding.name === 'spawn_agent')!;
      const listing = bindings.find((binding) => binding.name === 'list_directory')!;
      const reading = bindings.find((binding) => binding.name === 'read_file')!;
      const lookup = bindings.find((binding) => binding.name === 'lookup')!;
      t.equal(bindings.length, 4, 'the refused call was never bound');
      t.match(spawn, { provider_call_id: 'call_0', builtin: true });
      t.notOk('parent_call_id' in spawn);
      t.match(listing, { provider_call_id: 'call_0', parent_call_id: spawn.call_id });
      t.match(reading, { provider_call_id: 'call_1', parent_call_id: spawn.call_id });
      t.match(lookup, { provider_call_id: 'call_1', executor_id: executor.executor_id });
      const callIds = bindings.map((binding) => binding.call_id);
      t.equal(new Set(callIds).size, 4, "the daemon's call ids are unique in the turn");
      const results = records
        .filter((record) => record.kind === 'turn.call_result')
        .map((record) => record.data);
      t.same(results.map((result) => result.call_id).sort(), [...callIds].sort(), 'each has its own outcome');
      t.ok(results.every((result) => result.outcome.status === 'success'));
      const terminal = records.find((record) => record.kind === 'turn.terminal')!.data;
      t.same(
        terminal.calls.map((entry: { call_id: string }) => entry.call_id).sort(),
        [...callIds].sort(),
        'the terminal lists each call once',
      );

      const evidence = await who.client.call(
        'turn.application_evidence',
        { turn_id: accepted.turn_id },
        { session: who.session, control: who.control },
      );
      t.match(evidence.calls, [{ call_id: lookup.call_id, provider_call_id: 'call_1' }]);
      t.equal((evidence.calls as unknown[]).length, 1, 'the evidence holds the application call alone');

      const frames = who.client.received
        .flatMap((text) => text.split('\n').filter(Boolean))
        .map((line) => JSON.parse(line));
      const childActivity = frames
        .filter((frame) => frame.event === 'turn.activity' && frame.payload.activity.parent !== undefined)
        .map((frame) => frame.payload.activity);
      t.same(
        new Set(childActivity.map((activity) => activity.call)),
        new Set([hashedId(listing.call_id), hashedId(reading.call_id)]),
        "the child's calls are told apart in activity",
      );
      t.ok(childActivity.every((activity) => activity.parent === hashedId(spawn.call_id)));
    },
  );
}
