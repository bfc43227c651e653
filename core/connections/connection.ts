import { newId } from '../ids.js';
import type { Outbound } from './outbound.js';

export const APPLICATION_RESOURCES = 'application_resources_v1';

export interface ConnectionOptions {
  /** Whether `application_resources_v1` may be negotiated: on the Unix socket, not on stdio. */
  offersProfile?: boolean;
}

/**
 * One client connection, framework-free: its identity, what it negotiated, its in-flight request ids
 * and its outbound frames. Features attach what they need through `onClose`.
 */
export class Connection {
  readonly id = newId('conn');
  readonly outbound: Outbound;
  readonly offersProfile: boolean;
  initialized = false;
  negotiated: readonly string[] = [];
  readonly inFlight = new Set<string>();
  #closed = false;
  readonly #closeListeners: Array<(connection: Connection) => void> = [];

  constructor(outbound: Outbound, options: ConnectionOptions = {}) {
    this.outbound = outbound;
    this.offersProfile = options.offersProfile ?? true;
  }

  get profileSelected(): boolean {
    return this.negotiated.includes(APPLICATION_RESOURCES);
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(frame: string): boolean {
    return !this.#closed && this.outbound.send(frame);
  }

  onClose(listener: (connection: Connection) => void): void {
    if (this.#closed) listener(this);
    else this.#closeListeners.push(listener);
  }

  /** Marks the connection gone and tells every listener once. */
  markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#closeListeners.splice(0)) listener(this);
  }
}
