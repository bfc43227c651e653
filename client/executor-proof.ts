import { answer, operationId } from './typed-call.js';
import type { WireClient } from './wire-client.js';
import type { ExecutorAttach } from './wire-types.js';

/**
 * An executor's proofs: its resume secret and, while a rotation is not known to be confirmed, the
 * rotation's candidate beside it. Only direct create and rotate answers ever disclose a secret.
 */
export class ExecutorProof {
  #secret: string;
  #candidate: string | null;

  constructor(secret: string, candidate: string | null = null) {
    this.#secret = secret;
    this.#candidate = candidate;
  }

  get secret(): string {
    return this.#secret;
  }

  get candidate(): string | null {
    return this.#candidate;
  }

  /** A rotation's new secret, kept beside the current one until the rotation is known to be done. */
  propose(candidate: string): void {
    this.#candidate = candidate;
  }

  /**
   * `executor.resume` on `client`, with the rotation's candidate first (it may have been confirmed), then
   * with the current secret; the one that resumed becomes the proof. Null when neither resumes it.
   */
  async resumeOn(client: WireClient, executorId: string): Promise<ExecutorAttach | null> {
    const secrets = this.#candidate === null ? [this.#secret] : [this.#candidate, this.#secret];
    for (const secret of secrets) {
      const response = await answer(
        client,
        'executor.resume',
        { executor_id: executorId, resume_secret: secret },
        { operation: operationId() },
      );
      if (response.ok) {
        this.promote(secret);
        return response.result as ExecutorAttach;
      }
      if (response.error?.code !== 'unauthorized') throw new Error(response.error?.code);
    }
    return null;
  }

  /** The daemon confirmed `secret`: the candidate becomes the proof, or, if the old one resumed, is dropped. */
  promote(secret: string): void {
    if (secret === this.#candidate || this.#candidate === null) this.#secret = secret;
    // Otherwise the old secret resumed: the daemon cancelled the candidate.
    this.#candidate = null;
  }
}
