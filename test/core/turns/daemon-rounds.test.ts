import t from 'tap';
import { AgentToolbox } from '../../../core/agent/agent-toolbox.js';
import { BUILTIN_LIMITS } from '../../../core/agent/builtin-limits.js';
import type { DaemonCall, ToolOutcome } from '../../../core/agent/daemon-call.js';
import type { ToolCall } from '../../../core/provider/chat-provider.js';
import { ActiveTurn } from '../../../core/turns/active-turn.js';
import { DaemonRounds } from '../../../core/turns/daemon-rounds.js';
import type { TurnHistory } from '../../../core/turns/turn-history.js';
import { parseWorkspaceToolRequest } from '../../../core/workspace/workspace-tool-arguments.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { pinnedWorkspace } from '../../helpers/confined.js';

interface Harness {
  turn: ActiveTurn;
  rounds: DaemonRounds;
  written: string[];
  activity: Array<Record<string, unknown>>;
  ran: string[];
  /** The session each workspace tool call was run for. */
  sessions: string[];
  toolbox: AgentToolbox;
}

/** A round runner over a workspace tool that answers `answer`, and a history whose writes can fail. */
function harness(
  answer: ToolOutcome = { ok: true, output: '{"ok":1}' },
  failing?: 'binding' | 'result',
): Harness {
  const turn = new ActiveTurn({
    turnId: 'turn_1',
    sessionId: 'ses_1',
    operationId: 'op_1',
    prompt: 'p',
    workspace: pinnedWorkspace('/tmp'),
    builtins: ['read_file', 'list_directory'],
    mcpTools: [],
    manifest: null,
    pin: null,
    selected: false,
  });
  const written: string[] = [];
  const ran: string[] = [];
  const sessions: string[] = [];
  const history = {
    daemonBinding: async (_turn: ActiveTurn, call: DaemonCall) => {
      if (failing === 'binding') throw new Error('disk full');
      written.push(`binding ${call.providerCallId}`);
    },
    daemonResult: async (_turn: ActiveTurn, call: DaemonCall) => {
      if (failing === 'result') throw new Error('disk full');
      written.push(`result ${call.providerCallId}`);
    },
  } as unknown as TurnHistory;
  const workspaceTools = {
    run: async (request: { arguments: { path: string } }, _signal: AbortSignal, session: string) => {
      ran.push(request.arguments.path);
      sessions.push(session);
      return answer;
    },
    readInstructions: async (_request: unknown, _signal: AbortSignal, session: string) => {
      sessions.push(session);
      return { ok: true, output: JSON.stringify({ content: 'Be brief.', cut: false, linked: false }) };
    },
  };
  const toolbox = new AgentToolbox(['read_file', 'list_directory'], {
    workspaceTools: workspaceTools as never,
    commands: null,
    web: null,
    excludedDirectories: [],
    skills: { installed: [], excludedDirectories: [] },
    mcp: null,
    warn: () => {},
  });
  const activity: Array<Record<string, unknown>> = [];
  const rounds = new DaemonRounds({ history, toolbox, activity: (_turn, entry) => activity.push(entry) });
  return { turn, rounds, written, activity, ran, sessions, toolbox };
}

const read = (id: string, path = 'a.md'): ToolCall => ({
  id,
  name: 'read_file',
  arguments: JSON.stringify({ path }),
});

t.test('bindings are durable before any call runs, each result before the model reads it', async (t) => {
  const { turn, rounds, written, ran } = harness();
  const texts = await rounds.run({ turn, offered: turn.builtins, parentCallId: null }, [
    read('c1'),
    read('c2', 'b.md'),
  ]);
  t.same(written.slice(0, 2), ['binding c1', 'binding c2'], 'both bound first');
  t.same(written.slice(2).sort(), ['result c1', 'result c2']);
  t.same(ran.sort(), ['a.md', 'b.md']);
  t.same(
    [...texts.entries()],
    [
      ['c1', '{"ok":1}'],
      ['c2', '{"ok":1}'],
    ],
  );
  t.same(
    [...turn.daemonCalls.values()].map((call) => [call.status, call.effects]),
    [
      ['succeeded', 'reported'],
      ['succeeded', 'reported'],
    ],
  );
});

t.test(
  'calls are refused before anything runs: unknown tool, bad or repeated id, bad arguments',
  async (t) => {
    const { turn, rounds, ran, written } = harness();
    const scope = { turn, offered: turn.builtins, parentCallId: null };
    await rounds.run(scope, [read('c1')]);
    const texts = await rounds.run(scope, [
      { id: 'u1', name: 'write_file', arguments: '{"path":"x","content":""}' },
      read('c1'),
      read(''),
      read('x'.repeat(129)),
      { id: 'j1', name: 'read_file', arguments: '{"path":' },
      { id: 's1', name: 'read_file', arguments: '{"path":"a","extra":true}' },
      { id: 'b1', name: 'read_file', arguments: `{"path":"a"}${' '.repeat(BUILTIN_LIMITS.argument_bytes)}` },
    ]);
    const codes = [...texts.values()].map((text) => JSON.parse(text).error.code);
    t.same(codes, [
      'unknown_tool',
      'invalid_call_id',
      'invalid_call_id',
      'invalid_call_id',
      'invalid_arguments',
      'invalid_arguments',
      'invalid_arguments',
    ]);
    t.same(ran, ['a.md'], 'none of them ran');
    t.same(written, ['binding c1', 'result c1'], 'nor was bound');
  },
);

t.test('a turn makes at most 128 built-in calls; later ones are refused', async (t) => {
  const { turn, rounds, ran } = harness();
  const scope = { turn, offered: turn.builtins, parentCallId: null };
  for (let round = 0; round < 2; round++) {
    await rounds.run(
      scope,
      Array.from({ length: 64 }, (_, i) => read(`r${round}-${i}`)),
    );
  }
  t.equal(ran.length, BUILTIN_LIMITS.calls_per_turn, 'exactly at the bound');
  const texts = await rounds.run(scope, [read('one-more')]);
  t.match(JSON.parse(texts.get('one-more')!), { error: { code: 'call_limit' } }, 'one past it');
  t.equal(ran.length, BUILTIN_LIMITS.calls_per_turn);
});

t.test('an output over the bound fails the call instead of being cut', async (t) => {
  const exactly = { ok: true as const, output: 'x'.repeat(BUILTIN_LIMITS.output_bytes) };
  const at = harness(exactly);
  const kept = await at.rounds.run({ turn: at.turn, offered: at.turn.builtins, parentCallId: null }, [
    read('c1'),
  ]);
  t.equal(kept.get('c1'), exactly.output, 'exactly at the bound it is the result');
  const over = harness({ ok: true, output: `${exactly.output}y` });
  const failed = await over.rounds.run({ turn: over.turn, offered: over.turn.builtins, parentCallId: null }, [
    read('c1'),
  ]);
  t.match(JSON.parse(failed.get('c1')!), { error: { code: 'output_too_large' } });
  t.equal([...over.turn.daemonCalls.values()][0]?.status, 'failed');
});

t.test('a binding that cannot be written fails the turn and runs nothing', async (t) => {
  const { turn, rounds, ran } = harness(undefined, 'binding');
  await rounds.run({ turn, offered: turn.builtins, parentCallId: null }, [read('c1')]);
  t.same(ran, []);
  t.match(turn.ending, { status: 'failed', code: 'internal_error' });
  t.match([...turn.daemonCalls.values()][0], { status: 'cancelled', effects: 'not_dispatched' });
});

t.test('a result that cannot be written fails the turn; the call stays uncertain', async (t) => {
  const { turn, rounds, ran } = harness(undefined, 'result');
  await rounds.run({ turn, offered: turn.builtins, parentCallId: null }, [read('c1')]);
  t.same(ran, ['a.md']);
  t.match(turn.ending, { status: 'failed', code: 'internal_error' });
  t.match([...turn.daemonCalls.values()][0], { status: 'cancelled', effects: 'uncertain' });
});

t.test('a subagent’s calls carry their parent in activity', async (t) => {
  const { turn, rounds, activity } = harness();
  await rounds.run({ turn, offered: turn.builtins, parentCallId: 'call_parent' }, [read('c1')]);
  t.equal(activity.length, 2);
  t.ok(activity.every((entry) => typeof entry.parent === 'string' && (entry.parent as string).length === 16));
  t.same(
    activity.map((entry) => entry.status),
    ['pending', 'succeeded'],
  );
});

t.test('each loop has its own provider call ids: the turn’s and each subagent’s', async (t) => {
  const { turn, rounds, ran, written } = harness();
  const own = { turn, offered: turn.builtins, parentCallId: null };
  const child = { turn, offered: turn.builtins, parentCallId: 'call_spawn_1' };
  const sibling = { turn, offered: turn.builtins, parentCallId: 'call_spawn_2' };
  await rounds.run(own, [read('call_0')]);
  const inChild = await rounds.run(child, [read('call_0', 'b.md')]);
  const inSibling = await rounds.run(sibling, [read('call_0', 'c.md')]);
  t.same(inChild.get('call_0'), '{"ok":1}', 'the parent’s id is free in its subagent');
  t.same(inSibling.get('call_0'), '{"ok":1}', 'and in another subagent');
  t.same(ran, ['a.md', 'b.md', 'c.md']);
  const calls = [...turn.daemonCalls.values()];
  t.same(
    calls.map((call) => [call.providerCallId, call.parentCallId]),
    [
      ['call_0', null],
      ['call_0', 'call_spawn_1'],
      ['call_0', 'call_spawn_2'],
    ],
  );
  t.equal(new Set(calls.map((call) => call.callId)).size, 3, 'the daemon’s call ids stay unique in the turn');
  for (const scope of [own, child, sibling]) {
    const again = await rounds.run(scope, [read('call_0', 'd.md')]);
    t.match(JSON.parse(again.get('call_0')!), { error: { code: 'invalid_call_id' } }, 'repeated in its loop');
  }
  t.same(ran, ['a.md', 'b.md', 'c.md'], 'no repeated id ran');
  t.equal(written.length, 6, 'nor was bound');
});

t.test('a subagent’s calls and the workspace instructions are run as the turn’s session’s', async (t) => {
  const { turn, rounds, sessions, toolbox } = harness({
    ok: true,
    output: JSON.stringify({ content: 'Be brief.', next_offset: null }),
  });
  await rounds.run({ turn, offered: turn.builtins, parentCallId: null }, [read('c1')]);
  await rounds.run({ turn, offered: turn.builtins, parentCallId: 'call_parent' }, [read('c2')]);
  t.equal(
    await toolbox.workspaceInstructions(turn.workspace, turn.abort.signal, turn.sessionId),
    'Be brief.',
  );
  t.same(sessions, ['ses_1', 'ses_1', 'ses_1']);
});

t.test('built-in arguments: exactly their bound is read, one byte past it is refused', async (t) => {
  const { turn, rounds, ran } = harness();
  const padded = (bytes: number) => `{"path":"a.md"}${' '.repeat(bytes - '{"path":"a.md"}'.length)}`;
  const texts = await rounds.run({ turn, offered: turn.builtins, parentCallId: null }, [
    { id: 'at', name: 'read_file', arguments: padded(BUILTIN_LIMITS.argument_bytes) },
    { id: 'past', name: 'read_file', arguments: padded(BUILTIN_LIMITS.argument_bytes + 1) },
  ]);
  t.same(ran, ['a.md'], 'the call at the bound ran');
  t.match(JSON.parse(texts.get('past')!), { error: { code: 'invalid_arguments' } });
});

t.test(
  'the largest edit_file the schema accepts fits the argument bound however it is escaped',
  async (t) => {
    // Every character as a six-byte \\u escape, the longest JSON can write an ASCII character.
    const escaped = (text: string) =>
      [...text].map((character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const max = WORKSPACE_TOOL_LIMITS.write_bytes_max;
    const path = `${`${'d'.repeat(254)}/`.repeat(4)}f`.padEnd(WORKSPACE_TOOL_LIMITS.path_chars_max, 'f');
    const content = 'a'.repeat(max);
    const text = `{"path":"${escaped(path)}","old_text":"${escaped(content)}","new_text":"${escaped(content)}"}`;
    t.ok(Buffer.byteLength(text) <= BUILTIN_LIMITS.argument_bytes, 'within the argument bound');
    const call = parseWorkspaceToolRequest({
      tool: 'edit_file',
      workspace: pinnedWorkspace('/ws'),
      excludedDirectories: [],
      arguments: JSON.parse(text),
    }).call;
    t.match(call, { tool: 'edit_file', oldText: content, newText: content });
    t.equal(call.path.join('/'), path);
  },
);
