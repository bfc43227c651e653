import { TURN_LIMITS } from '../limits.js';
import type {
  ChatProvider,
  ConversationMessage,
  FunctionTool,
  ModelSelection,
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
  calls: CallDispatcher;
}

/**
 * The agent loop of one turn: a model round with the accepted instructions and tools; when the model
 * asks for tools, their calls run through the executor and their results (or errors, marked as errors)
 * go back to the model in the next round, until it answers without tools. Resolves with how the turn
 * ends; it never throws for a provider failure, a stop or a deadline.
 */
export async function runTurn(work: TurnWork): Promise<TurnEnding> {
  const { turn, provider, calls } = work;
  const snapshot = turn.pin?.snapshot ?? null;
  const system = snapshot && snapshot.instructions.length > 0 ? snapshot.instructions : null;
  const tools: FunctionTool[] = (snapshot?.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.descriptor.description,
    parameters: tool.contract?.input_schema as unknown as Readonly<Record<string, unknown>>,
  }));
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
      const { calls: admitted, refused } = await calls.admitRound(turn, answer.toolCalls);
      await calls.settle(turn, admitted);
      if (turn.ending) return turn.ending;
      const texts = new Map(refused.map((entry) => [entry.providerCallId, entry.content]));
      for (const call of admitted) {
        const { outcome } = await call.settled;
        if (outcome) texts.set(call.identity.providerCallId, outcomeText(outcome));
      }
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
