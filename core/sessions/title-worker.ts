import { type Clock, deadlineAt } from '../clock.js';
import type { HistoryStore } from '../history/history-store.js';
import { TITLE_LIMITS } from '../limits.js';
import type { ChatProvider, ModelSelection } from '../provider/chat-provider.js';
import { ProviderError } from '../provider/provider-error.js';
import { boundedTitle, TITLE_INSTRUCTION, titleMessages } from './title-text.js';

/** Why a session kept no title; logged, never shown to a client, never the provider's own words. */
export type TitleFailure = 'provider_error' | 'deadline' | 'no_title' | 'store_error';

export interface TitleWorkerOptions {
  clock: Clock;
  history: HistoryStore;
  provider: ChatProvider;
  /** Keeps the daemon from its idle stop while a title is being made; returns the release. */
  holdIdle: () => () => void;
  /** Told why a title was not made. The turn that asked for it is over and is not affected. */
  failed: (sessionId: string, reason: TitleFailure) => void;
}

/** Thrown from the event callback once enough of the answer arrived: the rest is not waited for. */
const ENOUGH = Symbol('enough');

/**
 * Titles for untitled sessions: after a session's first completed turn, one provider request with a fixed
 * instruction, the first prompt and its answer, bounded by a deadline on the clock. The bounded title is
 * stored on the session row unless the session got one meanwhile. Each worker is tracked per session so
 * that what ends the session's control (`session.close`, shutdown) can wait for it; a failure only logs.
 */
export class TitleWorker {
  readonly #options: TitleWorkerOptions;
  readonly #running = new Map<string, Promise<void>>();
  #closed = false;

  constructor(options: TitleWorkerOptions) {
    this.#options = options;
  }

  /**
   * After a session's first completed turn: asks for a title, unless the session has one or is getting
   * one, with the model selection that turn ran with.
   */
  firstTurnCompleted(sessionId: string, prompt: string, answer: string, selection: ModelSelection): void {
    if (this.#closed || this.#running.has(sessionId)) return;
    const session = this.#options.history.session(sessionId);
    if (!session || session.title !== null) return;
    const work = this.#work(sessionId, prompt, answer, selection).finally(() =>
      this.#running.delete(sessionId),
    );
    this.#running.set(sessionId, work);
  }

  isRunning(sessionId: string): boolean {
    return this.#running.has(sessionId);
  }

  /** Resolves once the session's title worker, if it has one, has ended (at the latest at its deadline). */
  settled(sessionId: string): Promise<void> {
    return this.#running.get(sessionId) ?? Promise.resolve();
  }

  /** Shutdown: no new title is asked for, and every running one is waited for until its deadline. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#running.values()]);
  }

  async #work(sessionId: string, prompt: string, answer: string, selection: ModelSelection): Promise<void> {
    const { clock, history, holdIdle, failed } = this.#options;
    const abort = new AbortController();
    let late = false;
    const deadline = deadlineAt(clock, clock.now() + TITLE_LIMITS.deadline_ms, () => {
      late = true;
      abort.abort();
    });
    const release = holdIdle();
    try {
      let text: string;
      try {
        text = await this.#ask(prompt, answer, selection, abort.signal);
      } catch (error) {
        failed(sessionId, late ? 'deadline' : error instanceof ProviderError ? 'provider_error' : 'no_title');
        return;
      }
      const title = boundedTitle(text);
      if (title === null) {
        failed(sessionId, 'no_title');
        return;
      }
      try {
        await history.writer.setTitle(sessionId, title, clock.wallNow());
      } catch {
        failed(sessionId, 'store_error');
      }
    } finally {
      deadline.cancel();
      release();
    }
  }

  /** The answer's text, up to TITLE_LIMITS.answer_chars; reasoning is not answer text. */
  async #ask(
    prompt: string,
    answer: string,
    selection: ModelSelection,
    signal: AbortSignal,
  ): Promise<string> {
    let text = '';
    try {
      await this.#options.provider.complete(
        { system: TITLE_INSTRUCTION, messages: titleMessages(prompt, answer), tools: [], selection, signal },
        (event) => {
          if (event.kind !== 'text') return;
          text += event.delta;
          if (text.length >= TITLE_LIMITS.answer_chars) throw ENOUGH;
        },
      );
    } catch (error) {
      if (error !== ENOUGH) throw error;
    }
    return text;
  }
}
