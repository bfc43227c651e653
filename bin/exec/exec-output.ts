import type { StatusLine } from './status-line.js';
import type { Paint, Style } from './styles.js';

/**
 * Where `magid exec` writes: the answer on stdout, one line per note on stderr. When both go to the same
 * terminal, a note never lands in the middle of a line of the answer (the answer's line is ended first), and
 * the status line is erased before anything else is written.
 */
export class ExecOutput {
  readonly #stdout: NodeJS.WritableStream;
  readonly #stderr: NodeJS.WritableStream;
  readonly #sameTerminal: boolean;
  readonly paint: Paint;
  status: StatusLine | null = null;
  #answerAtLineStart = true;
  #stdoutGone = false;

  constructor(
    streams: {
      stdout: NodeJS.WritableStream & { isTTY?: boolean };
      stderr: NodeJS.WritableStream & { isTTY?: boolean };
    },
    paint: Paint,
  ) {
    this.#stdout = streams.stdout;
    this.#stderr = streams.stderr;
    this.#sameTerminal = streams.stdout.isTTY === true && streams.stderr.isTTY === true;
    this.paint = paint;
    // A reader that went away (`| head`) ends the output, not the command: the turn still ends properly.
    streams.stdout.on('error', () => {
      this.#stdoutGone = true;
    });
  }

  /** Answer text, as it arrives. */
  answer(text: string): void {
    if (text === '' || this.#stdoutGone) return;
    if (this.#sameTerminal) this.status?.clear();
    this.#stdout.write(text);
    this.#answerAtLineStart = text.endsWith('\n');
  }

  /** One JSON line on stdout. */
  json(value: unknown): void {
    if (!this.#stdoutGone) this.#stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** One line on stderr. */
  note(text: string, style?: Style): void {
    this.status?.clear();
    if (this.#sameTerminal) this.endAnswerLine();
    this.#stderr.write(`${style ? this.paint(style, text) : text}\n`);
  }

  /** Ends the answer's last line, if the answer did not. */
  endAnswerLine(): void {
    if (this.#answerAtLineStart || this.#stdoutGone) return;
    this.#stdout.write('\n');
    this.#answerAtLineStart = true;
  }

  /** The status line may be drawn unless it would land in the middle of the answer on the same terminal. */
  canDrawStatus(): boolean {
    return !this.#sameTerminal || this.#answerAtLineStart;
  }
}
