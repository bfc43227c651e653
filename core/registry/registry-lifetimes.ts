import { type Clock, deadlineAt } from '../clock.js';
import type { RegistryLimits } from './registry-limits.js';
import { registryRefusals } from './registry-refusals.js';
import type { RetainedBudget } from './retained-budget.js';
import { SessionRegistry } from './session-registry.js';

/**
 * The sessions' registries and how long each lives: a claimed or protected one (a turn preparing, accepted
 * work through its worker's cleanup) has no deadline; an unclaimed one expires after the idle timeout,
 * started when the last protection ended and not restarted by later calls; an empty unclaimed one goes at
 * once. Expiry wins at the deadline: every lookup removes a registry whose deadline has passed first.
 */
export class RegistryLifetimes {
  readonly #clock: Clock;
  readonly #limits: RegistryLimits;
  readonly #budget: RetainedBudget;
  readonly #registries = new Map<string, SessionRegistry>();
  /** Turn preparations and accepted work per session, whether or not a registry exists yet. */
  readonly #protections = new Map<string, number>();

  constructor(clock: Clock, limits: RegistryLimits, budget: RetainedBudget) {
    this.#clock = clock;
    this.#limits = limits;
    this.#budget = budget;
  }

  /** How many registries live, and how many sessions are protected. */
  get size(): number {
    return this.#registries.size;
  }

  get protectedSessions(): number {
    return this.#protections.size;
  }

  /** A new empty registry, within the bound on registries. */
  create(sessionId: string): SessionRegistry {
    this.sweepDue();
    if (this.#registries.size + 1 > this.#limits.registry_sessions) throw registryRefusals.registrySessions();
    const registry = new SessionRegistry(sessionId);
    this.#registries.set(sessionId, registry);
    return registry;
  }

  /**
   * The registry as its controller uses it. A request of the current controller proves the session is
   * claimed, even where the claim itself was not reported.
   */
  controlled(sessionId: string): SessionRegistry | undefined {
    const registry = this.live(sessionId);
    if (registry && !registry.claimed) {
      registry.claimed = true;
      this.#settle(registry);
    }
    return registry;
  }

  /** The session's registry unless absent or expired; an expired one is removed first. */
  live(sessionId: string): SessionRegistry | undefined {
    const registry = this.#registries.get(sessionId);
    if (!registry || this.#expireIfDue(sessionId, registry)) return undefined;
    return registry;
  }

  /** A claim started (true) or ended (false). */
  claimed(sessionId: string, claimed: boolean): void {
    const registry = this.live(sessionId);
    if (!registry) return;
    registry.claimed = claimed;
    this.#settle(registry);
  }

  /** Protects the session's registry until the returned release, which is harmless to call twice. */
  protect(sessionId: string): () => void {
    const registry = this.live(sessionId);
    this.#protections.set(sessionId, (this.#protections.get(sessionId) ?? 0) + 1);
    if (registry) this.#settle(registry);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const remaining = (this.#protections.get(sessionId) ?? 1) - 1;
      if (remaining === 0) this.#protections.delete(sessionId);
      else this.#protections.set(sessionId, remaining);
      const current = this.live(sessionId);
      if (current) this.#settle(current);
    };
  }

  /** The live registries, expired ones removed first. */
  *all(): IterableIterator<SessionRegistry> {
    for (const [sessionId, registry] of [...this.#registries]) {
      if (!this.#expireIfDue(sessionId, registry)) yield registry;
    }
  }

  /**
   * Removes every registry whose deadline has passed, so that no count or budget decision counts a
   * registry that has expired but whose timer has not run yet.
   */
  sweepDue(): void {
    for (const [sessionId, registry] of this.#registries) this.#expireIfDue(sessionId, registry);
  }

  /** For shutdown: stops every idle timer; nothing expires any more. */
  stopTimers(): void {
    for (const registry of this.#registries.values()) {
      registry.idle?.cancel();
      registry.idle = null;
    }
  }

  #expireIfDue(sessionId: string, registry: SessionRegistry): boolean {
    if (!registry.idle || this.#clock.now() < registry.idle.at) return false;
    this.#remove(sessionId, registry);
    return true;
  }

  /** Applies the lifetime rules after a claim, protection or release changed. */
  #settle(registry: SessionRegistry): void {
    const sessionId = registry.sessionId;
    if (!registry.claimed && registry.size === 0) {
      this.#remove(sessionId, registry);
      return;
    }
    if (registry.claimed || this.#protections.has(sessionId)) {
      registry.idle?.cancel();
      registry.idle = null;
      return;
    }
    if (registry.idle) return;
    registry.idle = deadlineAt(this.#clock, this.#clock.now() + this.#limits.registry_idle_timeout_ms, () => {
      if (this.#registries.get(sessionId) === registry) this.#remove(sessionId, registry);
    });
  }

  /** Expiry or emptiness: the registry goes; pinned snapshots keep their revisions charged. */
  #remove(sessionId: string, registry: SessionRegistry): void {
    registry.idle?.cancel();
    registry.idle = null;
    this.#registries.delete(sessionId);
    for (const revision of registry.clear()) this.#budget.release(revision);
    registry.shared = null;
  }
}
