import type { AgentToolbox } from '../agent/agent-toolbox.js';
import type { DaemonCall, ToolOutcome } from '../agent/daemon-call.js';
import { PLAN_TOO_LARGE, type PlanStep, shownPlan } from '../agent/plan.js';
import { runSubagent } from '../agent/subagent.js';
import { TURN_LIMITS } from '../limits.js';
import type {
  ChatProvider,
  ConversationMessage,
  FunctionTool,
  ModelSelection,
  ProviderRound,
  ToolCall,
} from '../provider/chat-provider.js';
import { ProviderError } from '../provider/provider-error.js';
import type { ReasoningSummary } from '../provider/reasoning-summaries.js';
import type { ActiveTurn } from './active-turn.js';
import { type CallDispatcher, outcomeText } from './call-dispatcher.js';
import type { DaemonRounds, ToolScope } from './daemon-rounds.js';
import { daemonFailure, TurnEnding } from './turn-failure.js';

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
  /** The calls of built-in and MCP tools. */
  daemonTools: DaemonRounds;
  toolbox: AgentToolbox;
  /**
   * What precedes the application's instructions in the system message, in order: the home's
   * `AGENTS.md`, the workspace's `AGENTS.md`, the installed skills' index. Empty parts are left out.
   */
  instructions: readonly string[];
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
  const system = systemMessage([...work.instructions, snapshot?.instructions ?? '']);
  const tools: FunctionTool[] = [
    ...work.toolbox.definitions(turn.builtins, turn.mcpTools),
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
      if (answer.toolCalls.length === 0 && !answer.paused) return new TurnEnding('completed');
      messages.push(assistantMessage(answer));
      if (answer.toolCalls.length === 0) continue;
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
      if (error.kind === 'cancelled') return new TurnEnding('cancelled');
      // Nothing was sent: the credential the request needs has expired and could not be refreshed.
      if (error.kind === 'credential_expired') return new TurnEnding('failed', 'auth_expired');
      return new TurnEnding('failed', 'provider_error');
    }
    return daemonFailure(error);
  }
}

/** A finished round as the conversation's next assistant message, with what its API carries. */
export function assistantMessage(round: ProviderRound): ConversationMessage {
  return {
    role: 'assistant',
    content: round.text,
    toolCalls: round.toolCalls,
    ...(round.carry ? { carry: round.carry } : {}),
  };
}

/** One round's calls: the offered built-ins run here, everything else is the application's to run or refuse. */
async function runCalls(
  work: TurnWork,
  scope: ToolScope,
  toolCalls: readonly ToolCall[],
): Promise<Map<string, string>> {
  const { turn, calls } = work;
  const daemon = toolCalls.filter((call) => scope.offered.includes(call.name));
  const application = toolCalls.filter((call) => !daemon.includes(call));
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
  const [daemonTexts, appTexts] = await Promise.all([
    daemon.length > 0 ? work.daemonTools.run(scope, daemon) : new Map<string, string>(),
    applicationTexts(),
  ]);
  return new Map([...daemonTexts, ...appTexts]);
}

/**
 * What the turn's own calls of the daemon's tools may do: every offered built-in and MCP tool, a plan kept
 * on the turn, subagents, which get the same but `spawn_agent` and `update_plan`, and never an application
 * tool.
 */
function turnScope(work: TurnWork): ToolScope {
  const { turn, toolbox } = work;
  const mcp = turn.mcpTools.map((tool) => tool.name);
  const childBuiltins = toolbox.forSubagent(turn.builtins);
  const childOffered = [...childBuiltins, ...mcp];
  return {
    turn,
    offered: [...turn.builtins, ...mcp],
    parentCallId: null,
    plan: (call) => keepPlan(work, call),
    subagent: (call) =>
      runSubagent({
        task: call.arguments.task as string,
        provider: work.provider,
        selection: work.selection,
        tools: toolbox.definitions(childBuiltins, turn.mcpTools),
        signal: turn.abort.signal,
        runCalls: (toolCalls) =>
          work.daemonTools.run({ turn, offered: childOffered, parentCallId: call.callId }, toolCalls),
      }),
  };
}

/** The system message: the non-empty parts, in order, separated by a blank line; null when there is none. */
export function systemMessage(parts: readonly string[]): string | null {
  const present = parts.filter((part) => part.trim() !== '');
  return present.length > 0 ? present.join('\n\n') : null;
}

function keepPlan(work: TurnWork, call: DaemonCall): ToolOutcome {
  const steps = shownPlan(call.arguments.steps as PlanStep[]);
  if (!steps) return PLAN_TOO_LARGE;
  work.turn.plan = steps;
  work.activity({ kind: 'plan', steps });
  return { ok: true, output: JSON.stringify({ updated: true, steps: steps.length }) };
}
