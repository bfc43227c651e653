import { newId } from '../ids.js';
import type { ToolCall } from '../provider/chat-provider.js';
import type { BuiltinToolName } from '../resources/builtin-tools.js';
import { utf8ByteLength } from '../resources/unicode.js';
import type { ActiveTurn } from '../turns/active-turn.js';
import { hashedId, toolErrorText } from '../turns/call-dispatcher.js';
import { TurnEnding } from '../turns/turn-failure.js';
import type { TurnHistory } from '../turns/turn-history.js';
import type { AgentToolbox } from './agent-toolbox.js';
import { BuiltinCall, type BuiltinOutcome } from './builtin-call.js';
import { BUILTIN_LIMITS } from './builtin-limits.js';

/** Why a built-in call was answered without running; the model reads these codes. */
const REFUSED = {
  unknown_tool: 'no such tool in this turn',
  invalid_call_id: 'the call id is empty, too long, or repeated in this turn',
  invalid_arguments: "the arguments do not satisfy the tool's input schema",
  call_limit: 'the turn cannot make more built-in calls',
} as const;

/** The calls a round may make, and who made them: the turn itself, or one of its subagents. */
export interface BuiltinScope {
  turn: ActiveTurn;
  offered: readonly BuiltinToolName[];
  /** The `spawn_agent` call of the subagent whose round this is, or null. */
  parentCallId: string | null;
  /** Runs the subagent of a `spawn_agent` call; absent where subagents cannot be spawned. */
  subagent?: (call: BuiltinCall) => Promise<BuiltinOutcome>;
  /** Runs an `update_plan` call; absent where no plan is kept. */
  plan?: (call: BuiltinCall) => BuiltinOutcome;
}

export interface BuiltinRoundOptions {
  history: TurnHistory;
  toolbox: AgentToolbox;
  activity: (turn: ActiveTurn, activity: Record<string, unknown>) => void;
}

/**
 * The built-in calls of one model round: each is admitted or answered with a fixed error; the admitted
 * ones are bound durably together, then run in parallel, and each outcome is durable before the model
 * reads it. A call is run once: after a restart, a bound call without a recorded outcome is `uncertain`
 * and nothing runs it again. Activity names each call by a hash of its id and its status only.
 */
export class BuiltinRounds {
  readonly #options: BuiltinRoundOptions;

  constructor(options: BuiltinRoundOptions) {
    this.#options = options;
  }

  /** Resolves with the text of each call's tool message, by provider call id, once every call has ended. */
  async run(scope: BuiltinScope, toolCalls: readonly ToolCall[]): Promise<Map<string, string>> {
    const { turn } = scope;
    const texts = new Map<string, string>();
    const admitted: BuiltinCall[] = [];
    for (const toolCall of toolCalls) {
      const call = this.#admit(scope, toolCall);
      if (typeof call === 'string') texts.set(toolCall.id, toolErrorText(call, REFUSED[call]));
      else admitted.push(call);
    }
    try {
      await Promise.all(admitted.map((call) => this.#options.history.builtinBinding(turn, call)));
    } catch {
      for (const call of admitted) call.cancelled();
      turn.end(new TurnEnding('failed', 'internal_error'));
      return texts;
    }
    if (turn.ending) {
      for (const call of admitted) call.cancelled();
      return texts;
    }
    await Promise.all(
      admitted.map(async (call) => texts.set(call.providerCallId, await this.#runOne(scope, call))),
    );
    return texts;
  }

  #admit(scope: BuiltinScope, toolCall: ToolCall): BuiltinCall | keyof typeof REFUSED {
    const { turn, offered } = scope;
    const name = offered.find((candidate) => candidate === toolCall.name);
    if (!name) return 'unknown_tool';
    const idBytes = utf8ByteLength(toolCall.id);
    if (idBytes === 0 || idBytes > 128 || turn.providerCallIds.has(toolCall.id)) return 'invalid_call_id';
    if (utf8ByteLength(toolCall.arguments) > BUILTIN_LIMITS.argument_bytes) return 'invalid_arguments';
    let parsed: unknown;
    try {
      parsed = JSON.parse(toolCall.arguments);
    } catch {
      return 'invalid_arguments';
    }
    if (!this.#options.toolbox.accepts(name, parsed)) return 'invalid_arguments';
    if (turn.builtinCalls.size >= BUILTIN_LIMITS.calls_per_turn) return 'call_limit';
    const call = new BuiltinCall({
      callId: newId('call'),
      providerCallId: toolCall.id,
      name,
      parentCallId: scope.parentCallId,
      arguments: parsed as Record<string, unknown>,
    });
    turn.providerCallIds.add(toolCall.id);
    turn.builtinCalls.set(call.callId, call);
    return call;
  }

  async #runOne(scope: BuiltinScope, call: BuiltinCall): Promise<string> {
    const { turn } = scope;
    call.started();
    this.#activity(scope, call);
    const outcome = bounded(await this.#execute(scope, call));
    if (turn.ending) {
      call.cancelled();
      return '';
    }
    try {
      await this.#options.history.builtinResult(turn, call, outcome);
    } catch {
      call.cancelled();
      turn.end(new TurnEnding('failed', 'internal_error'));
      return '';
    }
    call.reported(outcome);
    this.#activity(scope, call);
    return outcome.ok ? outcome.output : toolErrorText(outcome.code, outcome.message);
  }

  #execute(scope: BuiltinScope, call: BuiltinCall): Promise<BuiltinOutcome> {
    if (call.name === 'spawn_agent' && scope.subagent) return scope.subagent(call);
    if (call.name === 'update_plan' && scope.plan) return Promise.resolve(scope.plan(call));
    return this.#options.toolbox.run(call, {
      workspace: scope.turn.workspace,
      signal: scope.turn.abort.signal,
    });
  }

  #activity(scope: BuiltinScope, call: BuiltinCall): void {
    this.#options.activity(scope.turn, {
      kind: 'tool_call',
      call: hashedId(call.callId),
      status: call.status,
      ...(call.parentCallId ? { parent: hashedId(call.parentCallId) } : {}),
    });
  }
}

/** A tool whose text would pass the output bound fails instead: the model never reads a silently cut result. */
function bounded(outcome: BuiltinOutcome): BuiltinOutcome {
  if (!outcome.ok || utf8ByteLength(outcome.output) <= BUILTIN_LIMITS.output_bytes) return outcome;
  return { ok: false, code: 'output_too_large', message: 'the tool output exceeds the output bound' };
}
