import type { CallState, SettledState } from './executor-types.js';

/** What became of each call an executor received, and the waits for a call to settle. */
export class CallStates {
  readonly #states = new Map<string, CallState>();
  readonly #waiters = new Set<() => void>();

  get all(): ReadonlyMap<string, CallState> {
    return this.#states;
  }

  has(callId: string): boolean {
    return this.#states.has(callId);
  }

  set(callId: string, state: CallState): void {
    this.#states.set(callId, state);
    this.wake();
  }

  /** Resolves once `callId` is settled (accepted, refused or not_accepted). */
  async settled(callId: string): Promise<SettledState> {
    for (;;) {
      const state = this.#states.get(callId);
      if (state === 'accepted' || state === 'refused' || state === 'not_accepted') return state;
      await new Promise<void>((resolve) => this.#waiters.add(resolve));
    }
  }

  /** Lets every wait look again (a state changed, or the executor closed). */
  wake(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
