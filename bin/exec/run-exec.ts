import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type MagiClient, type Session, WireCallError } from '../../client/index.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { connectDaemon } from '../daemon-client.js';
import { findSession, replayPage } from '../history-pages.js';
import { CallBook } from './call-book.js';
import { configurationWarnings } from './configuration-warnings.js';
import { HumanView, JsonView } from './event-view.js';
import type { ExecSettings } from './exec-command.js';
import { EXIT, ExecFailure, failureOf, UsageError } from './exec-errors.js';
import { ExecOutput } from './exec-output.js';
import { exitOf, followTurn, type TurnEnd } from './follow-turn.js';
import { Interrupts } from './interrupts.js';
import { selectModel } from './model-setting.js';
import { readPrompt, titleOf } from './prompt.js';
import { StatusLine } from './status-line.js';
import { painter, showsColors } from './styles.js';

/** The process around `magid exec`: its streams, environment, directory and time. */
export interface ExecIO {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & {
    isTTY?: boolean;
    columns?: number;
    hasColors?: (env?: object) => boolean;
  };
  env: NodeJS.ProcessEnv;
  cwd: string;
  clock: Clock;
  /** Leaves at once (a second Ctrl-C). */
  exit: (status: number) => void;
}

function processIO(): ExecIO {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    clock: systemClock,
    exit: (status) => process.exit(status),
  };
}

/**
 * `magid exec`: one turn in a new session over the workspace (or in `--session`), on the daemon of the home,
 * started when none listens. Returns the exit status: 0 completed, 1 failed, 2 refused or bad usage, 130
 * stopped with Ctrl-C.
 */
export async function exec(settings: ExecSettings, io: ExecIO = processIO()): Promise<number> {
  const paint = painter(showsColors(io.stderr, io.env));
  const output = new ExecOutput(io, paint);
  const live = settings.json !== true && io.stderr.isTTY === true && io.env.TERM !== 'dumb';
  const status = live ? new StatusLine(io.stderr, io.clock, paint, () => output.canDrawStatus()) : null;
  output.status = status;
  const interrupts = new Interrupts(() => {
    status?.stop();
    output.note('magid: left at once', 'yellow');
    io.exit(EXIT.interrupted);
  });
  const stopListening = interrupts.listen();
  let client: MagiClient | null = null;
  try {
    if (settings.session !== undefined && settings.workspace !== undefined) {
      throw new UsageError('--workspace cannot be given with --session: a session keeps its workspace');
    }
    const prompt = await readPrompt({ argument: settings.prompt, stdin: io.stdin });
    status?.start();
    if (status) status.label = 'connecting';
    client = await connectDaemon(settings, (line) => output.note(line), {
      ...(settings.providerBaseUrl === undefined ? {} : { providerBaseUrl: settings.providerBaseUrl }),
      ...(settings.model === undefined ? {} : { model: settings.model }),
    });
    for (const warning of await configurationWarnings(client.wire)) {
      output.note(`magid: warning: ${warning}`, 'yellow');
    }
    const { session, workspace } = await openSession(client, settings, prompt, io.cwd);
    if (settings.json !== true) output.note(`session ${session.id} · ${workspace}`, 'dim');
    const wire = client.wire;
    const end = await followTurn({
      session,
      prompt,
      view: settings.json
        ? new JsonView(output)
        : new HumanView(output, new CallBook((cursor) => replayPage(wire, session.id, cursor)), status),
      output,
      interrupts,
      clock: io.clock,
      timeoutMs: settings.timeoutMs,
      selectModel:
        settings.model === undefined ? null : () => selectModel(wire, workspace, settings.model as string),
    });
    return await finish(end, settings, output);
  } catch (error) {
    const failure = failureOf(error);
    output.note(`magid: ${failure.message}`, 'red');
    return failure.status;
  } finally {
    status?.stop();
    stopListening();
    client?.close();
  }
}

/** A new session over the workspace, titled after the prompt, or the session `--session` names. */
async function openSession(
  client: MagiClient,
  settings: ExecSettings,
  prompt: string,
  cwd: string,
): Promise<{ session: Session; workspace: string }> {
  if (settings.session !== undefined) {
    const found = await findSession(client.wire, settings.session);
    if (found === null) {
      throw new ExecFailure(`no session ${settings.session}: \`magid sessions\` lists them`, EXIT.refused);
    }
    return { session: await client.claimSession(found.session_id), workspace: found.workspace };
  }
  const workspace = resolve(cwd, settings.workspace ?? '.');
  try {
    return { session: await client.createSession(workspace, titleOf(prompt)), workspace };
  } catch (error) {
    if (error instanceof WireCallError && error.method === 'session.create') {
      throw new ExecFailure(`the workspace ${workspace} was refused: ${error.detail}`, EXIT.refused);
    }
    throw error;
  }
}

/** Ends the answer, writes `--output-last-message`, says what went wrong, and gives the exit status. */
async function finish(end: TurnEnd, settings: ExecSettings, output: ExecOutput): Promise<number> {
  output.endAnswerLine();
  const { terminal } = end;
  if (terminal.activity_dropped > 0 && settings.json !== true) {
    output.note(
      `magid: warning: ${terminal.activity_dropped} activity event(s) were dropped by the daemon and not shown`,
      'yellow',
    );
  }
  let { status, reason } = exitOf(end, settings.timeoutMs);
  if (settings.outputLastMessage !== undefined) {
    try {
      await writeFile(settings.outputLastMessage, terminal.assistant_text);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'an error';
      output.note(`magid: could not write ${settings.outputLastMessage} (${code})`, 'red');
      if (status === EXIT.completed) status = EXIT.failed;
    }
  }
  if (reason !== null) output.note(`magid: ${reason}`, status === EXIT.interrupted ? 'yellow' : 'red');
  return status;
}
