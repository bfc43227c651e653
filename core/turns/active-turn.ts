import { setMaxListeners } from 'node:events';
import { BUILTIN_LIMITS } from '../agent/builtin-limits.js';
import type { DaemonCall } from '../agent/daemon-call.js';
import type { PlanStep } from '../agent/plan.js';
import type { ConfinedWorkspace } from '../confinement/confined-workspace.js';
import { PROFILE_LIMITS, PROVIDER_LIMITS } from '../limits.js';
import type { McpTool } from '../mcp/mcp-servers.js';
import type { SnapshotPin } from '../registry/registry-snapshot.js';
import type { BuiltinToolName } from '../resources/builtin-tools.js';
import { utf8ByteLength } from '../resources/unicode.js';
import type { ApplicationCall } from './application-call.js';
import { type ApplicationManifest, manifestFieldBytes } from './application-manifest.js';
import type { TurnEnding } from './turn-failure.js';

export interface ActiveTurnInit {
  turnId: string;
  sessionId: string;
  operationId: string;
  prompt: string;
  /** The session's workspace, where the built-in tools work. */
  workspace: ConfinedWorkspace;
  /** The built-in tools offered to the model, decided at admission. */
  builtins: readonly BuiltinToolName[];
  /** The MCP tools ready at admission: the turn offers these and no others, whatever servers do later. */
  mcpTools: readonly McpTool[];
  /** Null for an ordinary turn. */
  manifest: ApplicationManifest | null;
  pin: SnapshotPin | null;
  /** Whether the turn's events carry an `application_manifest` field (null included) to its starter. */
  selected: boolean;
}

/**
 * One running turn: its live sequence, its accepted assistant text within the budget the manifest leaves,
 * its calls, and how it ends. The sequence is stamped here, before anything is queued, so events are
 * numbered in the order they were produced.
 */
export class ActiveTurn {
  readonly turnId: string;
  readonly sessionId: string;
  readonly operationId: string;
  readonly prompt: string;
  readonly workspace: ConfinedWorkspace;
  readonly builtins: readonly BuiltinToolName[];
  readonly mcpTools: readonly McpTool[];
  readonly manifest: ApplicationManifest | null;
  readonly pin: SnapshotPin | null;
  /** Encoded bytes the assistant text may take: 20,000 less the manifest field, a null one included. */
  readonly textBudget: number;
  readonly calls = new Map<string, ApplicationCall>();
  /** The turn's calls of built-in and MCP tools, its subagents' included, by call id. */
  readonly daemonCalls = new Map<string, DaemonCall>();
  /** Provider call ids of the admitted calls of each of the turn's loops, by loop (see `providerCallIds`). */
  readonly #providerCallIds = new Map<string | null, Set<string>>();
  /** The plan the model last sent with `update_plan`, or null. */
  plan: PlanStep[] | null = null;
  readonly abort = turnAbort();
  #sequence = 0;
  #text = '';
  #activityDropped = 0;
  #ending: TurnEnding | null = null;
  #stopped!: (ending: TurnEnding) => void;
  /** Settles with the ending decided from outside the worker (stop, close, a deadline, shutdown). */
  readonly stopped: Promise<TurnEnding>;

  constructor(init: ActiveTurnInit) {
    this.turnId = init.turnId;
    this.sessionId = init.sessionId;
    this.operationId = init.operationId;
    this.prompt = init.prompt;
    this.workspace = init.workspace;
    this.builtins = init.builtins;
    this.mcpTools = init.mcpTools;
    this.manifest = init.manifest;
    this.pin = init.pin;
    this.textBudget =
      PROFILE_LIMITS.assistant_text_bytes -
      (init.manifest || init.selected ? manifestFieldBytes(init.manifest) : 0);
    this.stopped = new Promise((resolve) => {
      this.#stopped = resolve;
    });
  }

  /** The next live sequence number; `turn.started` takes 0. */
  stamp(): number {
    return this.#sequence++;
  }

  /**
   * The provider call ids the admitted calls of one loop used, each usable once there: the turn's own loop
   * (null), whose application and daemon calls share one set, or the subagent of the `spawn_agent` call
   * `loop`. A provider numbers the calls of each request afresh, so each loop has its own.
   */
  providerCallIds(loop: string | null): Set<string> {
    let ids = this.#providerCallIds.get(loop);
    if (!ids) {
      ids = new Set();
      this.#providerCallIds.set(loop, ids);
    }
    return ids;
  }

  /** The last stamped sequence. */
  get sequence(): number {
    return Math.max(0, this.#sequence - 1);
  }

  get assistantText(): string {
    return this.#text;
  }

  get activityDropped(): number {
    return this.#activityDropped;
  }

  countDroppedActivity(): void {
    this.#activityDropped += 1;
  }

  /** Whether `delta` still fits the budget, escaping included; the caller refuses it before accepting. */
  fits(delta: string): boolean {
    return utf8ByteLength(JSON.stringify(this.#text + delta)) <= this.textBudget;
  }

  acceptText(delta: string): void {
    this.#text += delta;
  }

  get ending(): TurnEnding | null {
    return this.#ending;
  }

  /** Decides how the turn ends; the first decision wins. Aborts the provider round in flight. */
  end(ending: TurnEnding): boolean {
    if (this.#ending) return false;
    this.#ending = ending;
    this.abort.abort(ending);
    this.#stopped(ending);
    return true;
  }
}

/**
 * Everything a turn waits on listens to its signal at once: each of its built-in calls (its subagents'
 * included), a round's application calls, and the provider requests of its loops (16 is room for those).
 * Node warns of a leak past ten listeners; a turn at its bounds has more, and removes each when it settles.
 */
function turnAbort(): AbortController {
  const abort = new AbortController();
  setMaxListeners(BUILTIN_LIMITS.calls_per_turn + PROVIDER_LIMITS.tool_calls_per_round + 16, abort.signal);
  return abort;
}
