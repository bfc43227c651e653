/** The writable side of a connection, as much of it as the outbound queue needs. */
export interface FrameSink {
  write(frame: string): unknown;
  readonly writableLength: number;
  destroy(): void;
  readonly destroyed: boolean;
  /** Optional batching: frames written between cork and uncork go out in one write. */
  cork?(): void;
  uncork?(): void;
}

export interface OutboundBounds {
  /** Queued bytes at which the connection stops reading new requests until the reader catches up. */
  softBytes: number;
  /** Queued bytes at which the reader is too far behind and is disconnected. */
  hardBytes: number;
}

/**
 * Writes whole frames to one connection in the order they were produced, bounding what may queue
 * up behind a slow reader: past the soft bound reading pauses, past the hard bound the connection
 * is dropped rather than letting the daemon's memory grow.
 */
export class Outbound {
  readonly #sink: FrameSink;
  readonly #bounds: OutboundBounds;
  #congested = false;
  #corked = false;
  onCongestion: (congested: boolean) => void = () => {};

  constructor(sink: FrameSink, bounds: OutboundBounds) {
    this.#sink = sink;
    this.#bounds = bounds;
  }

  /** Queues one encoded frame; false when the connection is gone or was dropped as too slow. */
  send(frame: string): boolean {
    if (this.#sink.destroyed) return false;
    this.#batch();
    this.#sink.write(frame);
    const queued = this.#sink.writableLength;
    if (queued > this.#bounds.hardBytes) {
      this.#sink.destroy();
      return false;
    }
    if (!this.#congested && queued > this.#bounds.softBytes) {
      this.#congested = true;
      this.onCongestion(true);
    }
    return true;
  }

  /** Frames produced in one tick leave in one write: the socket is corked until the tick ends. */
  #batch(): void {
    if (this.#corked || !this.#sink.cork) return;
    this.#corked = true;
    this.#sink.cork();
    process.nextTick(() => {
      this.#corked = false;
      this.#sink.uncork?.();
    });
  }

  /** Called when the sink drained its queue. */
  drained(): void {
    if (this.#congested && this.#sink.writableLength <= this.#bounds.softBytes) {
      this.#congested = false;
      this.onCongestion(false);
    }
  }

  /** Bytes written and not yet taken by the peer. */
  get queuedBytes(): number {
    return this.#sink.writableLength;
  }

  get congested(): boolean {
    return this.#congested;
  }
}
