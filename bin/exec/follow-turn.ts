import {
  type Session,
  SessionControlEnded,
  type TerminalPayload,
  TurnConnectionLost,
  WireCallError,
} from '../../client/index.js';
import type { Clock } from '../../core/clock.js';
import type { TurnView } from './event-view.js';
import { EXIT, ExecFailure } from './exec-errors.js';
import type { ExecOutput } from './exec-output.js';
import type { Interrupts } from './interrupts.js';
import { elapsedText } from './status-line.js';

export interface TurnRequest {
  session: Session;
  prompt: string;
  view: TurnView;
  output: ExecOutput;
  interrupts: Interrupts;
  clock: Clock;
  timeoutMs: number | undefined;
  /** Applies `--model` for this turn; the function it returns puts the setting back. */
  selectModel: (() => Promise<() => Promise<void>>) | null;
}

/** How a turn ended, and whether the command stopped it. */
export interface TurnEnd {
  terminal: TerminalPayload;
  stoppedByUser: boolean;
  timedOut: boolean;
}

/**
 * Starts the turn and shows its events until its terminal. The first Ctrl-C (or the timeout) sends
 * `turn.stop` and the events go on until the terminal, `cancelled`; a Ctrl-C before the turn was started
 * starts nothing.
 */
export async function followTurn(request: TurnRequest): Promise<TurnEnd> {
  const { session, output, interrupts } = request;
  let turnId: string | null = null;
  let stoppedByUser = false;
  let timedOut = false;
  const stop = () => {
    // A turn that ended meanwhile answers unknown_turn: its terminal is on its way regardless.
    if (turnId !== null) session.stopTurn(turnId).catch(() => {});
  };
  interrupts.onFirst(() => {
    stoppedByUser = true;
    if (turnId !== null) output.note('magid: stopping the turn (Ctrl-C again leaves at once)', 'yellow');
    stop();
  });

  const restoreModel = request.selectModel ? await request.selectModel() : null;
  let turn: Awaited<ReturnType<Session['startTurn']>>;
  try {
    if (stoppedByUser) throw new ExecFailure('stopped before the turn started', EXIT.interrupted);
    turn = await session.startTurn(request.prompt);
  } catch (error) {
    throw refusal(error);
  } finally {
    await restoreModel?.().catch(() => {
      output.note("magid: warning: the workspace's model setting could not be put back", 'yellow');
    });
  }
  turnId = turn.accepted.turn_id;
  if (stoppedByUser) stop();
  const timer =
    request.timeoutMs === undefined
      ? null
      : request.clock.setTimeout(() => {
          timedOut = true;
          stop();
        }, request.timeoutMs);
  try {
    for await (const event of turn.events) {
      await request.view.show(event);
      if (event.event === 'turn.terminal') return { terminal: event.payload, stoppedByUser, timedOut };
    }
    throw new TurnConnectionLost();
  } catch (error) {
    throw lost(error, session.id);
  } finally {
    timer?.cancel();
  }
}

/** The exit status of a turn's end, and the reason said on stderr when it is not 0. */
export function exitOf(
  end: TurnEnd,
  timeoutMs: number | undefined,
): { status: number; reason: string | null } {
  const { terminal } = end;
  if (terminal.status === 'completed') return { status: EXIT.completed, reason: null };
  if (terminal.status === 'failed') {
    return {
      status: EXIT.failed,
      reason: `the turn failed: ${terminal.error?.code}: ${terminal.error?.message}`,
    };
  }
  if (end.timedOut) {
    return {
      status: EXIT.failed,
      reason: `the turn did not end within ${elapsedText(timeoutMs ?? 0)}; it was stopped`,
    };
  }
  if (end.stoppedByUser) return { status: EXIT.interrupted, reason: 'the turn was stopped' };
  return { status: EXIT.failed, reason: 'the turn was cancelled' };
}

function refusal(error: unknown): unknown {
  if (error instanceof WireCallError && error.code === 'provider_unavailable') {
    return new ExecFailure(
      `the daemon has no model provider (${error.detail}): a daemon \`magid exec\` starts takes --provider-base-url and --model, and the README's "Try it" shows one`,
      EXIT.refused,
    );
  }
  return error;
}

function lost(error: unknown, sessionId: string): unknown {
  if (error instanceof TurnConnectionLost) {
    return new ExecFailure(
      `the connection to the daemon closed before the turn ended; \`magid replay ${sessionId}\` shows how it ended`,
    );
  }
  if (error instanceof SessionControlEnded) {
    return new ExecFailure('another client took control of the session; the turn goes on there');
  }
  return error;
}
