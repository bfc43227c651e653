import { createHash } from 'node:crypto';
import type { ReplayRecord } from '../history-pages.js';

/** A call's outcome as its `turn.call_result` record keeps it (never its output). */
export type CallOutcome = { status: 'success' } | { status: 'error'; code: string; message: string };

/** What the history says of a call that activity names only by a hash. */
export interface CallEntry {
  name: string;
  /** The hash of the `spawn_agent` call a subagent's call belongs to, or null. */
  parent: string | null;
  outcome: CallOutcome | null;
}

type ReadPage = (cursor: string | null) => Promise<{ items: ReplayRecord[]; next_cursor: string | null }>;

/** The hash `turn.activity` names a call by: the first 16 hex digits of the SHA-256 of its `call_id`. */
export function callHash(callId: string): string {
  return createHash('sha256').update(callId).digest('hex').slice(0, 16);
}

/**
 * Names the calls of `turn.activity`. Activity carries only a hash of the call's id; the call's binding
 * (`turn.call`, with the tool's name) and its outcome (`turn.call_result`) are durable before the activity
 * that reports them is sent, so the session's history has them: it is read from where the last read ended.
 */
export class CallBook {
  readonly #read: ReadPage;
  readonly #calls = new Map<string, CallEntry>();
  /** The cursor of the last page read: later records are read from there. */
  #cursor: string | null = null;

  constructor(read: ReadPage) {
    this.#read = read;
  }

  /** The call of `hash`, with its outcome when `settled`; null when the history has no such call. */
  async find(hash: string, settled: boolean): Promise<CallEntry | null> {
    const known = this.#calls.get(hash);
    if (known && (!settled || known.outcome !== null)) return known;
    await this.#readNewer();
    return this.#calls.get(hash) ?? null;
  }

  async #readNewer(): Promise<void> {
    for (;;) {
      const page = await this.#read(this.#cursor);
      for (const record of page.items) this.#index(record);
      if (page.next_cursor === null) return;
      this.#cursor = page.next_cursor;
    }
  }

  #index(record: ReplayRecord): void {
    const data = record.data;
    if (data === null || typeof data.call_id !== 'string') return;
    const hash = callHash(data.call_id);
    if (record.kind === 'turn.call' && typeof data.name === 'string') {
      const parent = typeof data.parent_call_id === 'string' ? callHash(data.parent_call_id) : null;
      this.#calls.set(hash, { name: data.name, parent, outcome: this.#calls.get(hash)?.outcome ?? null });
    } else if (record.kind === 'turn.call_result') {
      const entry = this.#calls.get(hash);
      if (entry) entry.outcome = data.outcome as CallOutcome;
    }
  }
}
