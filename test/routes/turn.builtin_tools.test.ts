import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { EventFrame, WireClient } from '../../client/wire-client.js';
import { hashedId } from '../../core/turns/call-dispatcher.js';
import { op, startDaemon, type TestDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { applicationSession, startTurn, submitResult } from './turn.fixture.js';

const README = '# Notes\n\nTea is in the second drawer.\n';
const OPT_IN = ['write_file', 'edit_file', 'run_command', 'web_fetch'];

interface Scene {
  daemon: TestDaemon;
  provider: ScriptedProvider;
}

async function scene(t: Test, config?: Record<string, unknown>): Promise<Scene> {
  const provider = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    ...(config ? { config } : {}),
  });
  writeFileSync(join(daemon.workspace, 'README.md'), README);
  return { daemon, provider };
}

interface ChatMessage {
  role: string;
  content: string;
  tool_call_id?: string;
}

interface Frame {
  event?: string;
  sequence?: number;
  payload: { activity: Record<string, unknown> };
}

function framesOf(client: WireClient): Frame[] {
  return client.received.flatMap((text) => text.split('\n').filter(Boolean)).map((line) => JSON.parse(line));
}

function activities(client: WireClient): Array<{ sequence: number; activity: Record<string, unknown> }> {
  return framesOf(client)
    .filter((frame) => frame.event === 'turn.activity')
    .map((frame) => ({ sequence: frame.sequence!, activity: frame.payload.activity }));
}

async function records(client: WireClient, session: string) {
  const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
  // biome-ignore lint/suspicious/noExplicitAny: records are read member by member
  return replay.records as Array<{ kind: string; data: Record<string, any> }>;
}

const toolNames = (body: { tools?: Array<{ function: { name: string } }> }) =>
  (body.tools ?? []).map((tool) => tool.function.name);

for (const transport of TRANSPORTS) {
  t.test(`built-in tools in a turn (${transport})`, async (t) => {
    t.test(
      'read_file reads a workspace file for the model; activity and history hold no path or content',
      async (t) => {
        const { daemon, provider } = await scene(t);
        provider.replyToolCalls([{ id: 'c1', name: 'read_file', arguments: '{"path":"README.md"}' }]);
        provider.reply(['It says tea is in the second drawer.']);
        const who = await controller(daemon, transport);
        const accepted = resultOf<{ turn_id: string }>(
          await startTurn(who, { prompt: 'What does the readme say?' }),
        );
        const terminal = await who.client.event('turn.terminal');
        t.match(terminal.payload, { turn_id: accepted.turn_id, status: 'completed' });
        const [first, second] = provider.requests;
        t.same(toolNames(first!.body), [
          'read_file',
          'list_directory',
          'search_files',
          'update_plan',
          'spawn_agent',
        ]);
        for (const name of OPT_IN)
          t.notMatch(first!.text, `"${name}"`, `${name} is off: not in the request bytes`);
        const toolMessage = second!.body.messages.find((message: ChatMessage) => message.role === 'tool');
        t.match(toolMessage, { tool_call_id: 'c1' });
        t.same(JSON.parse(toolMessage.content), {
          size: Buffer.byteLength(README),
          offset: 0,
          length: Buffer.byteLength(README),
          content: README,
          next_offset: null,
          truncated: false,
        });
        const history = await records(who.client, who.session);
        const call = history.find((record) => record.kind === 'turn.call');
        t.match(call?.data, {
          turn_id: accepted.turn_id,
          provider_call_id: 'c1',
          name: 'read_file',
          builtin: true,
        });
        t.notOk('arguments' in (call?.data ?? {}), 'no arguments in the binding');
        const result = history.find((record) => record.kind === 'turn.call_result');
        t.same(result?.data, {
          turn_id: accepted.turn_id,
          call_id: call?.data.call_id,
          outcome: { status: 'success' },
        });
        t.match(history.find((record) => record.kind === 'turn.terminal')?.data.calls, [
          {
            call_id: call?.data.call_id,
            tool: 'read_file',
            status: 'succeeded',
            external_effects: 'reported',
          },
        ]);
        const callActivity = activities(who.client).filter((entry) => entry.activity.kind === 'tool_call');
        t.same(
          callActivity.map((entry) => entry.activity),
          [
            { kind: 'tool_call', call: hashedId(String(call?.data.call_id)), status: 'pending' },
            { kind: 'tool_call', call: hashedId(String(call?.data.call_id)), status: 'succeeded' },
          ],
        );
        const shown = JSON.stringify([
          framesOf(who.client).filter((frame) => frame.event === 'turn.activity'),
          history,
        ]);
        t.notMatch(shown, 'README.md', 'no path in activity or history');
        t.notMatch(shown, 'second drawer.\\n', 'nor the file content');
      },
    );

    t.test('a refused read goes back to the model as an error, and the turn goes on', async (t) => {
      const { daemon, provider } = await scene(t);
      provider.replyToolCalls([
        { id: 'c1', name: 'read_file', arguments: '{"path":"../outside"}' },
        { id: 'c2', name: 'read_file', arguments: '{"path":"README.md","extra":1}' },
      ]);
      provider.reply(['Could not.']);
      const who = await controller(daemon, transport);
      resultOf(await startTurn(who, { prompt: 'go' }));
      t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
      const tools = provider.requests[1]!.body.messages.filter(
        (message: ChatMessage) => message.role === 'tool',
      );
      t.match(JSON.parse(tools[0].content), { error: { code: 'invalid_path' } });
      t.match(JSON.parse(tools[1].content), { error: { code: 'invalid_arguments' } });
      t.notMatch(JSON.stringify(tools), 'outside', 'the refusal does not repeat the path');
    });

    t.test('a disabled tool is never offered and a call to it is unknown', async (t) => {
      const { daemon, provider } = await scene(t, {
        tools: { disabled: ['Read_File'], enabled: ['write_file'] },
      });
      provider.replyToolCalls([{ id: 'c1', name: 'read_file', arguments: '{"path":"README.md"}' }]);
      provider.reply(['ok']);
      const who = await controller(daemon, transport);
      resultOf(await startTurn(who, { prompt: 'go' }));
      await who.client.event('turn.terminal');
      const [first, second] = provider.requests;
      t.same(toolNames(first!.body), [
        'write_file',
        'list_directory',
        'search_files',
        'update_plan',
        'spawn_agent',
      ]);
      t.notMatch(first!.text, '"read_file"');
      t.notMatch(second!.text, '"name":"read_file","description"', 'not offered in the continuation either');
      const tool = second!.body.messages.find((message: ChatMessage) => message.role === 'tool');
      t.match(JSON.parse(tool.content), { error: { code: 'unknown_tool' } });
      t.notMatch(tool.content, 'drawer', 'nothing was read');
    });

    t.test(
      'update_plan shows the plan as activity and keeps the last one in the terminal record',
      async (t) => {
        const { daemon, provider } = await scene(t);
        const plan = (status: string) =>
          JSON.stringify({
            steps: [
              { step: 'Read the notes', status },
              { step: 'Answer', status: 'pending' },
            ],
          });
        provider.replyToolCalls([{ id: 'p1', name: 'update_plan', arguments: plan('in_progress') }]);
        provider.replyToolCalls([{ id: 'p2', name: 'update_plan', arguments: plan('completed') }]);
        provider.reply(['done']);
        const who = await controller(daemon, transport);
        resultOf(await startTurn(who, { prompt: 'go' }));
        await who.client.event('turn.terminal');
        const plans = activities(who.client).filter((entry) => entry.activity.kind === 'plan');
        t.same(
          plans.map((entry) => entry.activity),
          [
            {
              kind: 'plan',
              steps: [
                { step: 'Read the notes', status: 'in_progress' },
                { step: 'Answer', status: 'pending' },
              ],
            },
            {
              kind: 'plan',
              steps: [
                { step: 'Read the notes', status: 'completed' },
                { step: 'Answer', status: 'pending' },
              ],
            },
          ],
        );
        const terminal = (await records(who.client, who.session)).find(
          (record) => record.kind === 'turn.terminal',
        );
        t.same(terminal?.data.plan, [
          { step: 'Read the notes', status: 'completed' },
          { step: 'Answer', status: 'pending' },
        ]);
        const claimed = await who.client.call('session.claim', {}, { session: who.session, operation: op() });
        const snapshot = claimed.snapshot as { terminal: Record<string, unknown> };
        t.notOk('plan' in snapshot.terminal, 'the wire terminal is unchanged');
      },
    );
  });
}

t.test(
  'read_file, an application tool and spawn_agent in one turn; the subagent lists a directory',
  async (t) => {
    const { daemon, provider } = await scene(t);
    const app = await applicationSession(daemon, 'socket');
    const { who } = app;
    provider.replyToolCalls([
      { id: 'r1', name: 'read_file', arguments: '{"path":"README.md"}' },
      { id: 'a1', name: 'lookup', arguments: '{"path":"tea"}' },
      { id: 's1', name: 'spawn_agent', arguments: '{"task":"List the workspace."}' },
    ]);
    // The subagent's two rounds, then the parent's answer.
    provider.replyToolCalls([{ id: 'l1', name: 'list_directory', arguments: '{"path":"."}' }]);
    provider.reply(['The workspace holds README.md.']);
    provider.reply(['All done.']);
    const accepted = resultOf<{ turn_id: string }>(
      await startTurn(who, { prompt: 'go', application: app.application }),
    );
    const call: EventFrame = await who.client.event('turn.application_tool_call');
    t.equal(codeOf(await submitResult(who.client, who.session, app.executor, call)), 'ok');
    const terminal = await who.client.event('turn.terminal');
    t.match(terminal.payload, {
      turn_id: accepted.turn_id,
      status: 'completed',
      assistant_text: 'All done.',
    });

    const [parent, childFirst, childSecond, parentSecond] = provider.requests;
    t.same(toolNames(parent!.body), [
      'read_file',
      'list_directory',
      'search_files',
      'update_plan',
      'spawn_agent',
      'lookup',
    ]);
    for (const child of [childFirst!, childSecond!]) {
      t.same(
        toolNames(child.body),
        ['read_file', 'list_directory', 'search_files'],
        'built-ins only, no spawn_agent',
      );
      t.notMatch(child.text, '"lookup"', 'no application tool in the subagent request bytes');
      t.match(child.body.messages[child.body.messages.length === 2 ? 1 : 1], {
        role: 'user',
        content: 'List the workspace.',
      });
    }
    const listing = childSecond!.body.messages.find((message: ChatMessage) => message.role === 'tool');
    t.match(JSON.parse(listing.content), { entries: [{ name: 'README.md', type: 'file' }] });
    const spawned = parentSecond!.body.messages.find((message: ChatMessage) => message.tool_call_id === 's1');
    t.same(JSON.parse(spawned.content), { answer: 'The workspace holds README.md.', truncated: false });

    const history = await records(who.client, who.session);
    const bindings = history.filter((record) => record.kind === 'turn.call').map((record) => record.data);
    const spawnCall = bindings.find((binding) => binding.name === 'spawn_agent');
    const childCall = bindings.find((binding) => binding.name === 'list_directory');
    t.equal(childCall?.parent_call_id, spawnCall?.call_id, 'the child call names its parent');
    const recorded = history.find((record) => record.kind === 'turn.terminal')?.data;
    t.equal(recorded?.calls.length, 4, 'the terminal lists every call of the turn, the subagent’s included');
    t.ok(
      recorded?.calls.every(
        (entry: Record<string, unknown>) =>
          entry.status === 'succeeded' && entry.external_effects === 'reported',
      ),
    );

    const sequenced = framesOf(who.client).filter(
      (frame) => frame.event?.startsWith('turn.') && typeof frame.sequence === 'number',
    );
    const numbers = sequenced.map((frame) => frame.sequence!);
    t.same(
      numbers,
      [...numbers].sort((a, b) => a - b),
      'one sequence, increasing',
    );
    t.equal(new Set(numbers).size, numbers.length, 'no number used twice');
    const childActivity = activities(who.client).filter((entry) => entry.activity.parent !== undefined);
    t.same(
      childActivity.map((entry) => entry.activity),
      [
        {
          kind: 'tool_call',
          call: hashedId(String(childCall?.call_id)),
          status: 'pending',
          parent: hashedId(String(spawnCall?.call_id)),
        },
        {
          kind: 'tool_call',
          call: hashedId(String(childCall?.call_id)),
          status: 'succeeded',
          parent: hashedId(String(spawnCall?.call_id)),
        },
      ],
    );
  },
);

t.test('turn.stop cancels a subagent with its turn', async (t) => {
  const { daemon, provider } = await scene(t);
  provider.replyToolCalls([{ id: 's1', name: 'spawn_agent', arguments: '{"task":"Wait."}' }]);
  const hold = provider.hold();
  provider.script((await import('../helpers/provider-streams.js')).stream([hold]));
  const who = await controller(daemon, 'in-process');
  const accepted = resultOf<{ turn_id: string }>(await startTurn(who, { prompt: 'go' }));
  await hold.reached;
  const subagentRequest = provider.requests[1]!;
  t.equal(
    codeOf(
      await who.client.request(
        'turn.stop',
        { turn_id: accepted.turn_id },
        { session: who.session, control: who.control, operation: op() },
      ),
    ),
    'ok',
  );
  t.match((await who.client.event('turn.terminal')).payload, { status: 'cancelled' });
  await subagentRequest.disconnected;
  const terminal = (await records(who.client, who.session)).find((record) => record.kind === 'turn.terminal');
  t.match(terminal?.data.calls, [
    { tool: 'spawn_agent', status: 'cancelled', external_effects: 'uncertain' },
  ]);
  hold.release();
});

t.test(
  'status names the built-in tools offered; run_command without a usable sandbox is unavailable and never offered',
  async (t) => {
    const provider = await ScriptedProvider.start(t);
    const daemon = await startDaemon(t, {
      provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
      config: { tools: { enabled: ['run_command'] } },
      toolEnvironment: {
        searchPath: '/nonexistent',
        userHome: '/nonexistent',
        runtimeDirectory: null,
        socketPath: null,
      },
    });
    const client = await daemon.connect('in-process', []);
    t.match(await client.call('status'), {
      tools: {
        builtin: ['read_file', 'list_directory', 'search_files', 'update_plan', 'spawn_agent'],
        run_command: 'unavailable',
      },
      sandbox: { run_command: 'unavailable', reason: 'not_installed', bounds: null },
    });
    provider.reply(['ok']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'go' }));
    await who.client.event('turn.terminal');
    t.notMatch(provider.requests[0]!.text, 'run_command');
    const plain = await startDaemon(t);
    const status = await (await plain.connect('in-process', [])).call('status');
    t.match(
      status,
      { tools: { run_command: 'off' }, sandbox: { run_command: 'off', reason: null, bounds: null } },
      'off unless configured',
    );
  },
);

t.test('enabled write_file and edit_file change the workspace for the model', async (t) => {
  const { daemon, provider } = await scene(t, { tools: { enabled: ['write_file', 'edit_file'] } });
  provider.replyToolCalls([
    { id: 'w1', name: 'write_file', arguments: '{"path":"notes/todo.md","content":"buy tea\\n"}' },
  ]);
  provider.replyToolCalls([
    {
      id: 'e1',
      name: 'edit_file',
      arguments: '{"path":"notes/todo.md","old_text":"tea","new_text":"green tea"}',
    },
    { id: 'e2', name: 'edit_file', arguments: '{"path":"README.md","old_text":"coffee","new_text":"x"}' },
  ]);
  provider.reply(['Written.']);
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Note it down.' }));
  t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
  t.equal(readFileSync(join(daemon.workspace, 'notes', 'todo.md'), 'utf8'), 'buy green tea\n');
  const tools = (index: number) =>
    provider.requests[index]!.body.messages.filter((message: ChatMessage) => message.role === 'tool');
  t.same(JSON.parse(tools(1)[0].content), { bytes: 8, created: true });
  t.same(JSON.parse(tools(2)[1].content), { bytes: 14 });
  t.match(JSON.parse(tools(2)[2].content), { error: { code: 'old_text_not_found' } });
  t.equal(readFileSync(join(daemon.workspace, 'README.md'), 'utf8'), README, 'a failed edit changes nothing');
});

t.test(
  'web_fetch: a loopback page is refused by default, and read once private addresses are allowed',
  async (t) => {
    const page = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('the page');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    t.teardown(() => page.close());
    const url = `http://127.0.0.1:${(page.address() as { port: number }).port}/notes`;
    for (const allowed of [false, true]) {
      const { daemon, provider } = await scene(t, {
        tools: { enabled: ['web_fetch'], web_fetch: { allow_private_addresses: allowed } },
      });
      provider.replyToolCalls([{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url }) }]);
      provider.reply(['ok']);
      const who = await controller(daemon, 'in-process');
      resultOf(await startTurn(who, { prompt: 'Fetch it.' }));
      await who.client.event('turn.terminal');
      const tool = provider.requests[1]!.body.messages.find(
        (message: ChatMessage) => message.role === 'tool',
      );
      if (allowed) t.match(JSON.parse(tool.content), { status: 200, content: 'the page', truncated: false });
      else t.match(JSON.parse(tool.content), { error: { code: 'address_not_allowed' } });
    }
  },
);

t.test('results that expand under escaping reach the model cut to fit, never output_too_large', async (t) => {
  const { daemon, provider } = await scene(t);
  writeFileSync(join(daemon.workspace, 'quotes.txt'), '"'.repeat(17_000));
  mkdirSync(join(daemon.workspace, 'many'));
  for (let i = 0; i < 400; i += 1) {
    writeFileSync(join(daemon.workspace, 'many', `${String(i).padStart(3, '0')}-${'n'.repeat(51)}`), '');
  }
  writeFileSync(join(daemon.workspace, 'lines.txt'), `hit ${'\\'.repeat(300)}\n`.repeat(100));
  provider.replyToolCalls([
    { id: 'r1', name: 'read_file', arguments: '{"path":"quotes.txt"}' },
    { id: 'l1', name: 'list_directory', arguments: '{"path":"many"}' },
    { id: 's1', name: 'search_files', arguments: '{"pattern":"hit"}' },
  ]);
  provider.reply(['Read.']);
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Look.' }));
  t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
  const tools = provider.requests[1]!.body.messages.filter((message: ChatMessage) => message.role === 'tool');
  for (const tool of tools) {
    t.ok(Buffer.byteLength(tool.content) <= 32_768, `${tool.tool_call_id}: within the output bound`);
    t.match(JSON.parse(tool.content), { truncated: true }, `${tool.tool_call_id}: a result, cut`);
  }
  t.ok(JSON.parse(tools[0].content).next_offset > 0, 'the read says where to read on');
  t.ok(JSON.parse(tools[1].content).next_offset > 0, 'the listing says where to list on');
});

t.test(
  'a 200 KB write_file goes through a whole turn, streamed or in one event; nothing durable holds it',
  async (t) => {
    const { daemon, provider } = await scene(t, { tools: { enabled: ['write_file'] } });
    const line = (i: number) => `const s${i} = "tab\\there", path = 'C:\\\\dir', note = "é€😀";\n`;
    let content = '';
    for (let i = 0; Buffer.byteLength(content) < 200_000; i += 1) content += line(i);
    const streamed = JSON.stringify({ path: 'big/streamed.js', content });
    const whole = JSON.stringify({ path: 'big/whole.js', content });
    provider.replyToolCalls([{ id: 'w1', name: 'write_file', arguments: streamed }], { fragment: 512 });
    provider.replyToolCalls([{ id: 'w2', name: 'write_file', arguments: whole }], { fragment: whole.length });
    provider.reply(['Written.']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'Write it.' }));
    t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
    for (const name of ['streamed.js', 'whole.js']) {
      t.equal(readFileSync(join(daemon.workspace, 'big', name), 'utf8'), content, `${name} holds it all`);
    }
    const tool = (index: number) =>
      provider.requests[index]!.body.messages.find((message: ChatMessage) => message.role === 'tool');
    t.same(JSON.parse(tool(1).content), { bytes: Buffer.byteLength(content), created: true });
    t.same(JSON.parse(tool(2).content).bytes, Buffer.byteLength(content));
    const history = JSON.stringify(await records(who.client, who.session));
    t.notMatch(history, 'é€😀', 'no history record carries the content');
    t.notMatch(history, 'streamed.js', 'nor the path');
  },
);

t.test(
  'write_file content at its bound of 262,144 bytes is written, escaped six-fold in one event; one byte more is refused',
  async (t) => {
    const { daemon, provider } = await scene(t, { tools: { enabled: ['write_file'] } });
    const max = 262_144;
    const at = JSON.stringify({ path: 'at.bin.txt', content: '\u0001'.repeat(max) });
    const past = JSON.stringify({ path: 'past.txt', content: '\u0001'.repeat(max + 1) });
    t.ok(Buffer.byteLength(at) > 6 * max, 'each byte escaped to six');
    provider.replyToolCalls(
      [
        { id: 'at', name: 'write_file', arguments: at },
        { id: 'past', name: 'write_file', arguments: past },
      ],
      { fragment: past.length },
    );
    provider.reply(['Done.']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'Write.' }));
    t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
    t.equal(readFileSync(join(daemon.workspace, 'at.bin.txt'), 'utf8'), '\u0001'.repeat(max));
    t.notOk(existsSync(join(daemon.workspace, 'past.txt')), 'one byte over is not written');
    const tools = provider.requests[1]!.body.messages.filter(
      (message: ChatMessage) => message.role === 'tool',
    );
    t.same(JSON.parse(tools[0].content), { bytes: max, created: true });
    t.match(JSON.parse(tools[1].content), { error: { code: 'invalid_arguments' } });
  },
);
