import type { AgentToolbox } from '../agent/agent-toolbox.js';
import { BUILTIN_LIMITS } from '../agent/builtin-limits.js';
import { DaemonCall, type ToolOutcome } from '../agent/daemon-call.js';
import { newId } from '../ids.js';
import { PROFILE_LIMITS } from '../limits.js';
import type { ToolCall } from '../provider/chat-provider.js';
import { MCP_TOOL_PREFIX } from '../resources/names.js';
import { utf8ByteLength } from '../resources/unicode.js';
import type { ActiveTurn } from './active-turn.js';
import { hashedId, toolErrorText } from './call-dispatcher.js';
import { MODEL_CALL_REFUSALS, readModelCall } from './model-call.js';
import { TurnEnding } from './turn-failure.js';
import type { TurnHistory } from './turn-history.js';

/** Why a daemon call was answered without running; the model reads these codes. */
const REFUSED = {
  ...MODEL_CALL_REFUSALS,
  call_limit: "the turn cannot make more calls of the daemon's tools",
} as const;

/** The calls a round may make, and who made them: the turn itself, or one of its subagents. */
export interface ToolScope {
  turn: ActiveTurn;
  /** The names of the built-in and MCP tools the round may call. */
  offered: readonly string[];
  /**
   * The `spawn_agent` call of the subagent whose round this is, or null. It names the loop too: a call may
   * not repeat the provider call id of an admitted call of the same loop, and only of that loop.
   */
  parentCallId: string | null;
  /** Runs the subagent of a `spawn_agent` call; absent where subagents cannot be spawned. */
  subagent?: (call: DaemonCall) => Promise<ToolOutcome>;
  /** Runs an `update_plan` call; absent where no plan is kept. */
  plan?: (call: DaemonCall) => ToolOutcome;
}

export interface DaemonRoundOptions {
  history: TurnHistory;
  toolbox: AgentToolbox;
  activity: (turn: ActiveTurn, activity: Record<string, unknown>) => void;
}

/**
 * The calls of one model round to tools the daemon runs (built-in tools and MCP servers' tools): each is
 * admitted or answered with a fixed error; the admitted
 * ones are bound durably together, then run in parallel, and each outcome is durable before the model
 * reads it. A call is run once: after a restart, a bound call without a recorded outcome is `uncertain`
 * and nothing runs it again. Activity names each call by a hash of its id and its status only.
 */
export class DaemonRounds {
  readonly #options: DaemonRoundOptions;

  constructor(options: DaemonRoundOptions) {
    this.#options = options;
  }

  /** Resolves with the text of each call's tool message, by provider call id, once every call has ended. */
  async run(scope: ToolScope, toolCalls: readonly ToolCall[]): Promise<Map<string, string>> {
    const { turn } = scope;
    const texts = new Map<string, string>();
    const admitted: DaemonCall[] = [];
    for (const toolCall of toolCalls) {
      const call = this.#admit(scope, toolCall);
      if (typeof call === 'string') texts.set(toolCall.id, toolErrorText(call, REFUSED[call]));
      else admitted.push(call);
    }
    try {
      await Promise.all(admitted.map((call) => this.#options.history.daemonBinding(turn, call)));
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

  #admit(scope: ToolScope, toolCall: ToolCall): DaemonCall | keyof typeof REFUSED {
    const { turn, offered } = scope;
    const name = toolCall.name;
    if (!offered.includes(name)) return 'unknown_tool';
    const usedIds = turn.providerCallIds(scope.parentCallId);
    const kind = name.startsWith(MCP_TOOL_PREFIX) ? 'mcp' : 'builtin';
    // An MCP server's call is held to the profile's bound, as an application's is.
    const read = readModelCall(
      usedIds,
      toolCall,
      kind === 'builtin' ? BUILTIN_LIMITS.argument_bytes : PROFILE_LIMITS.argument_bytes,
    );
    if (typeof read === 'string') return read;
    const parsed = read.arguments;
    if (!this.#options.toolbox.accepts(name, parsed)) return 'invalid_arguments';
    if (turn.daemonCalls.size >= BUILTIN_LIMITS.calls_per_turn) return 'call_limit';
    const call = new DaemonCall({
      callId: newId('call'),
      providerCallId: toolCall.id,
      name,
      kind,
      parentCallId: scope.parentCallId,
      arguments: parsed as Record<string, unknown>,
    });
    usedIds.add(toolCall.id);
    turn.daemonCalls.set(call.callId, call);
    return call;
  }

  async #runOne(scope: ToolScope, call: DaemonCall): Promise<string> {
    const { turn } = scope;
    call.started();
    this.#activity(scope, call);
    const outcome = bounded(await this.#execute(scope, call));
    if (turn.ending) {
      call.cancelled();
      return '';
    }
    try {
      await this.#options.history.daemonResult(turn, call, outcome);
    } catch {
      call.cancelled();
      turn.end(new TurnEnding('failed', 'internal_error'));
      return '';
    }
    call.reported(outcome);
    this.#activity(scope, call);
    return outcome.ok ? outcome.output : toolErrorText(outcome.code, outcome.message);
  }

  #execute(scope: ToolScope, call: DaemonCall): Promise<ToolOutcome> {
    if (call.name === 'spawn_agent' && scope.subagent) return scope.subagent(call);
    if (call.name === 'update_plan' && scope.plan) return Promise.resolve(scope.plan(call));
    return this.#options.toolbox.run(call, {
      workspace: scope.turn.workspace,
      signal: scope.turn.abort.signal,
      session: scope.turn.sessionId,
    });
  }

  #activity(scope: ToolScope, call: DaemonCall): void {
    this.#options.activity(scope.turn, {
      kind: 'tool_call',
      call: hashedId(call.callId),
      status: call.status,
      ...(call.parentCallId ? { parent: hashedId(call.parentCallId) } : {}),
    });
  }
}

/** A tool whose text would pass the output bound fails instead: the model never reads a silently cut result. */
function bounded(outcome: ToolOutcome): ToolOutcome {
  if (!outcome.ok || utf8ByteLength(outcome.output) <= BUILTIN_LIMITS.output_bytes) return outcome;
  return { ok: false, code: 'output_too_large', message: 'the tool output exceeds the output bound' };
}
