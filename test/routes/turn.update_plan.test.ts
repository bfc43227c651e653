import t from 'tap';
import { BUILTIN_LIMITS } from '../../core/agent/builtin-limits.js';
import { controller, resultOf } from './session.resources.fixture.js';
import { startTurn, turnDaemon } from './turn.fixture.js';

interface ChatMessage {
  role: string;
  content: string;
  tool_call_id?: string;
}

const plan = (...steps: string[]) =>
  JSON.stringify({ steps: steps.map((step) => ({ step, status: 'pending' })) });

t.test(
  'update_plan: steps at the character bound are kept whole, one past it is refused to the model',
  async (t) => {
    const { daemon, provider } = await turnDaemon(t);
    const bound = BUILTIN_LIMITS.plan_step_chars;
    const ascii = 'a'.repeat(bound);
    const accented = 'é'.repeat(bound);
    provider.replyToolCalls([{ id: 'p1', name: 'update_plan', arguments: plan(ascii, accented) }]);
    provider.replyToolCalls([
      { id: 'p2', name: 'update_plan', arguments: plan(`${ascii}a`) },
      { id: 'p3', name: 'update_plan', arguments: plan(`${accented}é`) },
    ]);
    provider.reply(['done']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'go' }));
    await who.client.event('turn.terminal');

    const tools = (index: number) =>
      provider.requests[index]!.body.messages.filter((message: ChatMessage) => message.role === 'tool');
    t.same(JSON.parse(tools(1)[0].content), { updated: true, steps: 2 });
    const refusals = tools(2)
      .slice(1)
      .map((message: ChatMessage) => JSON.parse(message.content).error.code);
    t.same(refusals, ['invalid_arguments', 'invalid_arguments'], 'refused to the model, not cut');

    const frames = who.client.received
      .flatMap((text) => text.split('\n').filter(Boolean))
      .map((line) => JSON.parse(line));
    const plans = frames
      .filter((frame) => frame.event === 'turn.activity' && frame.payload.activity.kind === 'plan')
      .map((frame) => frame.payload.activity.steps);
    const kept = [
      { step: ascii, status: 'pending' },
      { step: accented, status: 'pending' },
    ];
    t.same(plans, [kept], 'one plan shown, its 256 é whole; the refused ones are not shown');
    const replay = await who.client.call(
      'session.replay',
      { cursor: null, limit: 100 },
      { session: who.session },
    );
    const records = replay.records as Array<{ kind: string; data: Record<string, unknown> }>;
    t.same(records.find((record) => record.kind === 'turn.terminal')?.data.plan, kept, 'and kept');
    const outcomes = records
      .filter((record) => record.kind === 'turn.call_result')
      .map((record) => record.data.outcome);
    t.same(outcomes, [{ status: 'success' }], 'the refused calls were never bound');
  },
);
