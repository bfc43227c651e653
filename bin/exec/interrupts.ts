/**
 * Ctrl-C. The first press does what the command says it does at that moment (stop the turn and wait for
 * its end); a second press, or a first one while there is nothing to stop, leaves at once.
 */
export class Interrupts {
  readonly #leave: () => void;
  #onFirst: (() => void) | null = null;
  #presses = 0;
  readonly #handler = () => {
    this.#presses += 1;
    if (this.#presses === 1 && this.#onFirst !== null) this.#onFirst();
    else this.#leave();
  };

  constructor(leave: () => void) {
    this.#leave = leave;
  }

  /** Whether Ctrl-C was pressed. */
  get pressed(): boolean {
    return this.#presses > 0;
  }

  /** What a first press does from now on; null: it leaves at once. */
  onFirst(action: (() => void) | null): void {
    this.#onFirst = action;
  }

  listen(target: NodeJS.EventEmitter = process): () => void {
    target.on('SIGINT', this.#handler);
    return () => target.off('SIGINT', this.#handler);
  }
}
