import type { AgentToolbox } from '../agent/agent-toolbox.js';
import type { BuiltinCall, BuiltinOutcome } from '../agent/builtin-call.js';
import type { BuiltinRounds, BuiltinScope } from '../agent/builtin-round.js';
import { type PlanStep, shownPlan } from '../agent/plan.js';
import { runSubagent } from '../agent/subagent.js';
import { TURN_LIMITS } from '../limits.js';
import type {
  ChatProvider,
  ConversationMessage,
  FunctionTool,
  ModelSelection,
  ToolCall,
} from '../provider/chat-provider.js';
import { ProviderError } from '../provider/provider-error.js';
import type { ReasoningSummary } from '../provider/reasoning-summaries.js';
import type { ActiveTurn } from './active-turn.js';
import { type CallDispatcher, outcomeText } from './call-dispatcher.js';
import { TurnEnding } from './turn-failure.js';

export interface TurnWork {
  turn: ActiveTurn;
  provider: ChatProvider;
  /** The settings the turn was admitted with; every round uses them, whatever changes meanwhile. */
  selection: ModelSelection;
  /** Earlier exchanges of the session. */
  context: ConversationMessage[];
  /** Emits an accepted assistant delta. */
  text: (delta: string) => void;
  activity: (activity: Record<string, unknown>) => void;
  /** A reasoning summary the provider documents as one; shown only where the capability was negotiated. */
  summary: (summary: ReasoningSummary) => void;
  /** The application calls. */
  calls: CallDispatcher;
  /** The built-in calls. */
  builtins: BuiltinRounds;
  toolbox: AgentToolbox;
}

/**
 * The agent loop of one turn: a model round with the accepted instructions, the offered built-in tools and
 * the application's tools; when the model asks for tools, built-in calls run in the daemon and application
 * calls through the executor, side by side, and their results (or errors, marked as errors) go back to the
 * model in the next round, until it answers without tools. Resolves with how the turn ends; it never
 * throws for a provider failure, a stop or a deadline.
 */
export async function runTurn(work: TurnWork): Promise<TurnEnding> {
  const { turn, provider } = work;
  const snapshot = turn.pin?.snapshot ?? null;
  const system = snapshot && snapshot.instructions.length > 0 ? snapshot.instructions : null;
  const tools: FunctionTool[] = [
    ...work.toolbox.definitions(turn.builtins),
    ...(snapshot?.tools ?? []).map((tool) => ({
      name: tool.name,
      description: tool.descriptor.description,
      parameters: tool.contract?.input_schema as unknown as Readonly<Record<string, unknown>>,
    })),
  ];
  const scope = turnScope(work);
  const messages: ConversationMessage[] = [...work.context, { role: 'user', content: turn.prompt }];
  try {
    for (let round = 0; ; round++) {
      if (round >= TURN_LIMITS.provider_rounds) return new TurnEnding('failed', 'limit_exceeded');
      const reported = new Set<string>();
      const answer = await provider.complete(
        { selection: work.selection, system, messages, tools, signal: turn.abort.signal },
        (event) => {
          if (turn.ending) throw turn.ending;
          if (event.kind === 'text') {
            // A delta that would not fit is refused before it is accepted: the text is never cut.
            if (!turn.fits(event.delta)) throw new TurnEnding('failed', 'limit_exceeded');
            turn.acceptText(event.delta);
            work.text(event.delta);
          } else if (event.kind === 'reasoning_summary') {
            work.summary(event);
          } else {
            // Each kind once a round: activity says what the model is doing, not how much of it.
            const kind = event.kind === 'reasoning' ? 'reasoning' : 'tool_call_requested';
            if (!reported.has(kind)) work.activity({ kind });
            reported.add(kind);
          }
        },
      );
      if (turn.ending) return turn.ending;
      if (answer.toolCalls.length === 0) return new TurnEnding('completed');
      messages.push({ role: 'assistant', content: answer.text, toolCalls: answer.toolCalls });
      const texts = await runCalls(work, scope, answer.toolCalls);
      if (turn.ending) return turn.ending;
      for (const toolCall of answer.toolCalls) {
        messages.push({ role: 'tool', toolCallId: toolCall.id, content: texts.get(toolCall.id) ?? '' });
      }
    }
  } catch (error) {
    if (turn.ending) return turn.ending;
    if (error instanceof TurnEnding) return error;
    if (error instanceof ProviderError) {
      return error.kind === 'cancelled'
        ? new TurnEnding('cancelled')
        : new TurnEnding('failed', 'provider_error');
    }
    return new TurnEnding('failed', 'internal_error');
  }
}

/** One round's calls: the offered built-ins run here, everything else is the application's to run or refuse. */
async function runCalls(
  work: TurnWork,
  scope: BuiltinScope,
  toolCalls: readonly ToolCall[],
): Promise<Map<string, string>> {
  const { turn, calls } = work;
  const builtin = toolCalls.filter((call) => turn.builtins.some((name) => name === call.name));
  const application = toolCalls.filter((call) => !builtin.includes(call));
  const applicationTexts = async (): Promise<Map<string, string>> => {
    if (application.length === 0) return new Map();
    const { calls: admitted, refused } = await calls.admitRound(turn, application);
    await calls.settle(turn, admitted);
    const texts = new Map(refused.map((entry) => [entry.providerCallId, entry.content]));
    if (turn.ending) return texts;
    for (const call of admitted) {
      const { outcome } = await call.settled;
      if (outcome) texts.set(call.identity.providerCallId, outcomeText(outcome));
    }
    return texts;
  };
  const [builtinTexts, appTexts] = await Promise.all([
    builtin.length > 0 ? work.builtins.run(scope, builtin) : new Map<string, string>(),
    applicationTexts(),
  ]);
  return new Map([...builtinTexts, ...appTexts]);
}

/** What the turn's own built-in calls may do: every offered tool, a plan kept on the turn, subagents. */
function turnScope(work: TurnWork): BuiltinScope {
  const { turn, toolbox } = work;
  return {
    turn,
    offered: turn.builtins,
    parentCallId: null,
    plan: (call) => keepPlan(work, call),
    subagent: (call) =>
      runSubagent({
        task: call.arguments.task as string,
        provider: work.provider,
        selection: work.selection,
        tools: toolbox.definitions(toolbox.forSubagent),
        signal: turn.abort.signal,
        runCalls: (toolCalls) =>
          work.builtins.run({ turn, offered: toolbox.forSubagent, parentCallId: call.callId }, toolCalls),
      }),
  };
}

function keepPlan(work: TurnWork, call: BuiltinCall): BuiltinOutcome {
  const steps = shownPlan(call.arguments.steps as PlanStep[]);
  work.turn.plan = steps;
  work.activity({ kind: 'plan', steps });
  return { ok: true, output: JSON.stringify({ updated: true, steps: steps.length }) };
}
