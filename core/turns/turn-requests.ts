import type { AgentToolbox } from '../agent/agent-toolbox.js';
import type { Clock } from '../clock.js';
import type { ConfinedWorkspace } from '../confinement/confined-workspace.js';
import type { ExecutorRegistry } from '../executors/executor-registry.js';
import type { HistoryStore } from '../history/history-store.js';
import type { ChatProvider, ModelSelection } from '../provider/chat-provider.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { AcceptedController, ApplicationManifest } from './application-manifest.js';
import type { EvidenceStore } from './evidence-store.js';
import type { ApplicationSelection } from './turn-admission.js';
import type { TurnSink } from './turn-events.js';

/** What the turn coordinator is built over, what a `turn.start` asks of it, and what it answers. */

export interface TurnCoordinatorOptions {
  clock: Clock;
  history: HistoryStore;
  registry: ResourceRegistry;
  executors: ExecutorRegistry;
  /** The configured provider, or null: turns are then refused with `provider_unavailable`. */
  provider: ChatProvider | null;
  sink: TurnSink;
  /** Reconnect evidence of the turns of profile connections. */
  evidence: EvidenceStore;
  /** The operation ledger: a turn's operation is accepted at admission and settled with its terminal. */
  operations: {
    accept(operationId: string, result: unknown): void;
    settle(operationId: string, outcome: { ok: true; result: unknown }): void;
  };
  /** The daemon's own tools, offered to every turn beside its application tools. */
  toolbox: AgentToolbox;
  /** Read once at startup: the home's `AGENTS.md` and the installed skills' index ('' when absent). */
  instructions: { home: string; skillIndex: string };
  /** Keeps the daemon from its idle stop while a turn runs; returns the release. */
  holdIdle: () => () => void;
  /**
   * Told when a turn completed and none of its session's earlier turns had, once its terminal is durable
   * and sent: the terminal never waits for what this starts.
   */
  firstTurnCompleted?: (sessionId: string, prompt: string, answer: string, selection: ModelSelection) => void;
}

export interface TurnStart {
  sessionId: string;
  operationId: string;
  connectionId: string;
  /** Whether the initiating connection selected `application_resources_v1`. */
  selected: boolean;
  controller: AcceptedController;
  prompt: string;
  /** The session's workspace. */
  workspace: ConfinedWorkspace;
  application: ApplicationSelection | undefined;
  /** The model settings at admission, which the turn keeps to its end; null when no model is selected. */
  selection: ModelSelection | null;
}

export interface TurnAcceptance {
  turn_id: string;
  status: 'accepted';
  application_manifest?: ApplicationManifest | null;
}
