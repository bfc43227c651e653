import type { ReplayRecord } from './history-pages.js';

interface BoundCall {
  name: string;
  subagent: boolean;
  outcome: { status: 'success' } | { status: 'error'; code: string; message: string } | null;
}

interface TerminalData {
  status: 'completed' | 'failed' | 'cancelled';
  error: { code: string; message: string } | null;
  assistant_text: string;
  calls?: Array<{ call_id: string; tool?: string; status: string; external_effects: string }>;
  plan?: Array<{ step: string; status: string }>;
}

const PLAN_MARKS: Record<string, string> = { completed: '✓', in_progress: '▸', pending: '○' };

/**
 * A session's history as a person reads it: each prompt, the tool calls of its turn with their outcome,
 * the plan it kept and its answer, and how the turn ended when it did not complete. Records come in order;
 * `line` is called once per line.
 */
export class Transcript {
  readonly #line: (text: string) => void;
  /** The calls of the turn being read, by call id, in the order they were bound. */
  #calls = new Map<string, BoundCall>();
  #turns = 0;

  constructor(line: (text: string) => void) {
    this.#line = line;
  }

  add(record: ReplayRecord): void {
    const data = record.data;
    if (record.omitted || data === null) {
      this.#line(`(a ${record.kind} record too large to replay)`);
      return;
    }
    switch (record.kind) {
      case 'turn.user':
        this.#prompt(String(data.prompt ?? ''));
        return;
      case 'turn.call':
        this.#calls.set(String(data.call_id), {
          name: String(data.name),
          subagent: typeof data.parent_call_id === 'string',
          outcome: null,
        });
        return;
      case 'turn.call_result': {
        const call = this.#calls.get(String(data.call_id));
        if (call) call.outcome = data.outcome as BoundCall['outcome'];
        return;
      }
      case 'turn.terminal':
        this.#terminal(data as unknown as TerminalData);
        return;
      case 'session.closed':
        this.#line('(session closed)');
        return;
      default:
        return;
    }
  }

  #prompt(prompt: string): void {
    if (this.#turns > 0) this.#line('');
    this.#turns += 1;
    this.#calls = new Map();
    for (const line of prompt.split('\n')) this.#line(`> ${line}`);
  }

  #terminal(terminal: TerminalData): void {
    const ended = new Map(terminal.calls?.map((call) => [call.call_id, call]));
    for (const [callId, call] of this.#calls) {
      const [indent, who] = call.subagent ? ['  ', `${call.name} (subagent)`] : ['', call.name];
      if (call.outcome?.status === 'success') this.#line(`${indent}✓ ${who}`);
      else if (call.outcome?.status === 'error') {
        this.#line(`${indent}✗ ${who}: ${call.outcome.code}: ${call.outcome.message}`);
      } else {
        const end = ended.get(callId);
        const what = end ? `${end.status}, effects ${end.external_effects}` : 'no outcome recorded';
        this.#line(`${indent}✗ ${who}: ${what}`);
      }
    }
    if (terminal.plan && terminal.plan.length > 0) {
      const steps = terminal.plan.map(({ step, status }) => `${PLAN_MARKS[status] ?? '○'} ${step}`);
      this.#line(`plan: ${steps.join('  ')}`);
    }
    if (terminal.assistant_text !== '')
      for (const line of terminal.assistant_text.split('\n')) this.#line(line);
    if (terminal.status === 'failed') {
      this.#line(`[failed: ${terminal.error?.code}: ${terminal.error?.message}]`);
    } else if (terminal.status === 'cancelled') this.#line('[cancelled]');
  }
}
