import type { Clock, Timer } from '../../core/clock.js';
import type { Paint } from './styles.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const TICK_MS = 100;
/** Erases the terminal's current line and returns to its start. */
export const ERASE_LINE = '\r\x1b[2K';

export interface StatusStream {
  write(text: string): unknown;
  /** The terminal's width, when known (0 when the terminal does not say). */
  columns?: number;
}

/** `4s`, `1m 05s`. */
export function elapsedText(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

/**
 * The live line at the bottom of a terminal: a spinner, the time since the command started and what the
 * turn is doing (the current tool, by name). It is redrawn every 100 ms when `canDraw` allows (never in the
 * middle of a line of the answer), erased before any other output, and gone once stopped.
 */
export class StatusLine {
  readonly #stream: StatusStream;
  readonly #clock: Clock;
  readonly #paint: Paint;
  readonly #canDraw: () => boolean;
  readonly #startedAt: number;
  #label = 'starting';
  #frame = 0;
  #shown = false;
  #timer: Timer | null = null;

  constructor(stream: StatusStream, clock: Clock, paint: Paint, canDraw: () => boolean) {
    this.#stream = stream;
    this.#clock = clock;
    this.#paint = paint;
    this.#canDraw = canDraw;
    this.#startedAt = clock.now();
  }

  get shown(): boolean {
    return this.#shown;
  }

  set label(text: string) {
    this.#label = text;
  }

  start(): void {
    if (this.#timer === null) this.#tick();
  }

  /** Erases the line, if shown; the next tick draws it again. */
  clear(): void {
    if (!this.#shown) return;
    this.#stream.write(ERASE_LINE);
    this.#shown = false;
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
    this.clear();
  }

  #tick(): void {
    if (this.#canDraw()) this.#draw();
    this.#frame = (this.#frame + 1) % FRAMES.length;
    this.#timer = this.#clock.setTimeout(() => this.#tick(), TICK_MS);
  }

  #draw(): void {
    const text = `${FRAMES[this.#frame]} ${elapsedText(this.#clock.now() - this.#startedAt)} ${this.#label}`;
    // Kept within one row: a wrapped line could not be erased by going back to its start.
    const width = Math.max(10, (this.#stream.columns || 80) - 1);
    const shown = [...text].length > width ? `${[...text].slice(0, width - 1).join('')}…` : text;
    this.#stream.write(`${ERASE_LINE}${this.#paint('dim', shown)}`);
    this.#shown = true;
  }
}
