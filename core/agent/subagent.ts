import type {
  ChatProvider,
  ConversationMessage,
  FunctionTool,
  ModelSelection,
  ToolCall,
} from '../provider/chat-provider.js';
import { ProviderError } from '../provider/provider-error.js';
import { cutUtf8, utf8ByteLength } from '../resources/unicode.js';
import { BUILTIN_LIMITS } from './builtin-limits.js';
import type { ToolOutcome } from './daemon-call.js';

/** The subagent's system message: who it is working for, and that its last answer is all that returns. */
export const SUBAGENT_INSTRUCTION =
  'You are a subagent working on one task for another agent, in the same workspace. Use the tools you are given as needed, then answer with what you found or did: your final answer is all the other agent will see.';

export interface SubagentWork {
  task: string;
  provider: ChatProvider;
  /** The parent turn's model selection. */
  selection: ModelSelection;
  tools: readonly FunctionTool[];
  /** The parent turn's: stopping the turn stops the subagent. */
  signal: AbortSignal;
  /** Runs one round's calls in the subagent's scope; resolves with each call's tool message text. */
  runCalls: (toolCalls: readonly ToolCall[]) => Promise<Map<string, string>>;
}

/**
 * A subagent: a bounded loop of its own messages against the parent's provider and model selection, with
 * built-in tools only. Its text is not streamed; its final answer, cut to BUILTIN_LIMITS.subagent_answer_bytes,
 * is the `spawn_agent` call's result. A provider failure or too many rounds fail the call, not the turn.
 */
export async function runSubagent(work: SubagentWork): Promise<ToolOutcome> {
  const messages: ConversationMessage[] = [{ role: 'user', content: work.task }];
  try {
    for (let round = 0; round < BUILTIN_LIMITS.subagent_rounds; round++) {
      let text = '';
      const answer = await work.provider.complete(
        {
          selection: work.selection,
          system: SUBAGENT_INSTRUCTION,
          messages,
          tools: work.tools,
          signal: work.signal,
        },
        (event) => {
          // Only what fits is kept, so a runaway answer cannot grow without bound.
          if (event.kind === 'text' && utf8ByteLength(text) <= BUILTIN_LIMITS.subagent_answer_bytes) {
            text += event.delta;
          }
        },
      );
      if (work.signal.aborted) return CANCELLED;
      if (answer.toolCalls.length === 0 && !answer.paused) return answerOutcome(text);
      messages.push({
        role: 'assistant',
        content: answer.text,
        toolCalls: answer.toolCalls,
        ...(answer.carry ? { carry: answer.carry } : {}),
      });
      if (answer.toolCalls.length === 0) continue;
      const texts = await work.runCalls(answer.toolCalls);
      if (work.signal.aborted) return CANCELLED;
      for (const toolCall of answer.toolCalls) {
        messages.push({ role: 'tool', toolCallId: toolCall.id, content: texts.get(toolCall.id) ?? '' });
      }
    }
    return { ok: false, code: 'round_limit', message: 'the subagent did not answer within its round limit' };
  } catch (error) {
    if (work.signal.aborted || (error instanceof ProviderError && error.kind === 'cancelled'))
      return CANCELLED;
    return { ok: false, code: 'agent_failed', message: 'the subagent could not reach the model' };
  }
}

const CANCELLED: ToolOutcome = { ok: false, code: 'cancelled', message: 'the turn ended' };

function answerOutcome(text: string): ToolOutcome {
  const answer = cutUtf8(text, BUILTIN_LIMITS.subagent_answer_bytes);
  return { ok: true, output: JSON.stringify({ answer, truncated: answer !== text }) };
}
