import type { KeptCall } from './executor-store.js';
import type { SettledState } from './executor-types.js';
import { RESULT_REFUSED } from './executor-types.js';
import { answer, operationId, typedCall } from './typed-call.js';
import type { WireClient } from './wire-client.js';
import type { OperationLookupResult, ToolCallPayload, ToolOutcome } from './wire-types.js';

/** What a result must echo of its call. */
type Binding = Pick<ToolCallPayload, 'turn_id' | 'resource_id' | 'revision_id' | 'revision_sha256'>;

export interface Retained {
  sessionId: string;
  binding: Binding;
  outcome: ToolOutcome;
  /** Every operation id a submission of this result used: one of them may have been accepted. */
  operations: string[];
  inFlight: boolean;
  /** The handler's value was refused by the output schema, and a fixed error replaced it. */
  refused: boolean;
}

/** What the delivery needs of its executor. */
export interface DeliveryHost {
  readonly executorId: string;
  /** The connection and generation to submit on now; null while the executor recovers or once it closed. */
  attachment(): { client: WireClient; generation: number } | null;
  /** The generation now, to tell a stale refusal from one of this attachment. */
  generation(): number;
  /** The connection the executor is attached to now, recovering or not: lookups go there. */
  client(): WireClient;
  /** Writes the executor's record (the operations of a submission are kept before it is sent). */
  persist(): Promise<void>;
  /** The wait before trying again. */
  delay(): Promise<void>;
  /** A result waits for its acknowledgment. */
  retained(callId: string): void;
  /** A call ended: nothing more can happen to it. */
  settled(callId: string, state: SettledState): void;
  /** The daemon refused a handler's value against its output schema. */
  refused(callId: string): void;
}

/**
 * The results an executor retains until the daemon acknowledged them: each submitted on the current
 * connection at the current generation, again after a resume, and reconciled with `operation.lookup` when
 * a submission's answer was lost, so that a result is delivered once and a call never runs twice.
 */
export class ResultDelivery {
  readonly #host: DeliveryHost;
  readonly #retained = new Map<string, Retained>();

  constructor(host: DeliveryHost) {
    this.#host = host;
  }

  /** The calls whose result waits for its acknowledgment. */
  callIds(): string[] {
    return [...this.#retained.keys()];
  }

  retain(callId: string, retained: Retained): void {
    this.#retained.set(callId, retained);
    this.#host.retained(callId);
  }

  /** Retains a kept call's outcome for submission, keeping the operations of its earlier submissions. */
  retainKept(kept: KeptCall, outcome: ToolOutcome): void {
    kept.outcome = outcome;
    this.retain(kept.call_id, {
      sessionId: kept.session_id,
      binding: kept,
      outcome,
      operations: kept.operations,
      inFlight: false,
      refused: false,
    });
  }

  settle(callId: string, state: SettledState): void {
    this.#retained.delete(callId);
    this.#host.settled(callId, state);
  }

  /** Submits a retained result on the current connection at the current generation. */
  async submit(callId: string): Promise<void> {
    const retained = this.#retained.get(callId);
    const attachment = this.#host.attachment();
    if (retained === undefined || retained.inFlight || attachment === null) return;
    const { client, generation } = attachment;
    const operation = operationId();
    retained.operations.push(operation);
    retained.inFlight = true;
    // Kept before it is sent: a restarted application looks this submission up instead of guessing.
    await this.#host.persist();
    const response = await answer(
      client,
      'turn.application_tool_result',
      {
        turn_id: retained.binding.turn_id,
        call_id: callId,
        executor_id: this.#host.executorId,
        executor_generation: generation,
        resource_id: retained.binding.resource_id,
        revision_id: retained.binding.revision_id,
        revision_sha256: retained.binding.revision_sha256,
        outcome: retained.outcome,
      },
      { session: retained.sessionId, operation },
    ).catch(() => null);
    retained.inFlight = false;
    // No answer: the connection dropped, and recovery submits again or reconciles.
    if (response === null) return;
    if (response.ok) return this.settle(callId, retained.refused ? 'refused' : 'accepted');
    switch (response.error?.code) {
      case 'unknown_turn':
        // Not pending any more: an earlier submission was accepted, or the call ended without us.
        return this.reconcile(callId);
      case 'stale_connection':
        if (generation !== this.#host.generation()) return this.submit(callId);
        return;
      case 'invalid_payload':
        if (retained.outcome.status === 'success') {
          retained.outcome = { status: 'error', code: 'execution_failed', message: RESULT_REFUSED };
          retained.refused = true;
          this.#host.refused(callId);
          return this.submit(callId);
        }
        return;
      default:
        // A transient refusal (limit_exceeded, shutting_down): try again; a call that ends meanwhile
        // answers unknown_turn and settles.
        await this.#host.delay();
        return this.submit(callId);
    }
  }

  /** Decides from the lookups of earlier submissions whether one of them was accepted. */
  async reconcile(callId: string): Promise<void> {
    const retained = this.#retained.get(callId);
    if (retained === undefined) return;
    for (const operation of retained.operations) {
      for (;;) {
        let lookup: OperationLookupResult;
        try {
          lookup = await typedCall<OperationLookupResult>(this.#host.client(), 'operation.lookup', {
            operation_id: operation,
          });
        } catch {
          return; // the connection dropped: recovery reconciles again
        }
        if (lookup.status === 'accepted') {
          await this.#host.delay();
          continue;
        }
        if (lookup.status === 'completed')
          return this.settle(callId, retained.refused ? 'refused' : 'accepted');
        break;
      }
    }
    this.settle(callId, 'not_accepted');
  }
}
