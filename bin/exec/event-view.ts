import type { Activity, TurnEvent } from '../../client/index.js';
import type { CallBook, CallEntry } from './call-book.js';
import type { ExecOutput } from './exec-output.js';
import type { StatusLine } from './status-line.js';

/** How a turn's events are shown, one at a time, in the order they arrived. */
export interface TurnView {
  show(event: TurnEvent): Promise<void>;
}

/** `--json`: each event exactly as the wire carried it, one JSON line each on stdout. */
export class JsonView implements TurnView {
  readonly #output: ExecOutput;
  constructor(output: ExecOutput) {
    this.#output = output;
  }
  async show(event: TurnEvent): Promise<void> {
    this.#output.json(event);
  }
}

const PLAN_MARKS = { completed: '✓', in_progress: '▸', pending: '○' } as const;

type ToolCallActivity = Extract<Activity, { kind: 'tool_call' }>;

/**
 * The view for a person: the answer on stdout as it streams; on stderr one line per tool call as it starts
 * and as it ends (with the error of a failed one), per plan update and per subagent call; the status line
 * says what the turn is doing meanwhile.
 */
export class HumanView implements TurnView {
  readonly #output: ExecOutput;
  readonly #calls: CallBook;
  readonly #status: StatusLine | null;

  constructor(output: ExecOutput, calls: CallBook, status: StatusLine | null) {
    this.#output = output;
    this.#calls = calls;
    this.#status = status;
  }

  async show(event: TurnEvent): Promise<void> {
    if (event.event === 'turn.started') this.#doing('waiting for the model');
    else if (event.event === 'turn.assistant_delta') {
      this.#output.answer(event.payload.delta);
      this.#doing('answering');
    } else if (event.event === 'turn.activity') await this.#activity(event.payload.activity);
  }

  async #activity(activity: Activity): Promise<void> {
    switch (activity.kind) {
      case 'reasoning':
        return this.#doing('thinking');
      case 'tool_call_requested':
        return this.#doing('choosing tools');
      case 'plan':
        return this.#output.note(
          `plan: ${activity.steps.map(({ step, status }) => `${PLAN_MARKS[status]} ${step}`).join('  ')}`,
        );
      case 'tool_call':
        return this.#toolCall(activity);
      default:
        return;
    }
  }

  async #toolCall(activity: ToolCallActivity): Promise<void> {
    const settled = activity.status === 'succeeded' || activity.status === 'failed';
    const entry = await this.#calls.find(activity.call, settled);
    const name = entry?.name ?? `call ${activity.call}`;
    const indent = activity.parent === undefined ? '' : '  ';
    const who = activity.parent === undefined ? name : `${name} (subagent)`;
    if (activity.status === 'pending') {
      this.#output.note(`${indent}→ ${who}`, 'cyan');
      this.#doing(name);
    } else if (activity.status === 'waiting_for_executor') {
      this.#output.note(`${indent}… ${who} waits for its executor`, 'yellow');
    } else if (activity.status === 'succeeded') {
      this.#output.note(`${indent}✓ ${who}`, 'green');
      this.#doing('waiting for the model');
    } else {
      this.#output.note(`${indent}✗ ${who}${failureText(entry)}`, 'red');
      this.#doing('waiting for the model');
    }
  }

  #doing(label: string): void {
    if (this.#status) this.#status.label = label;
  }
}

function failureText(entry: CallEntry | null): string {
  const outcome = entry?.outcome;
  return outcome?.status === 'error' ? `: ${outcome.code}: ${outcome.message}` : '';
}
