import { connectDaemon, type DaemonFlags } from './daemon-client.js';
import { failureOf } from './exec/exec-errors.js';
import { allSessions, type SessionSummary } from './history-pages.js';

export interface SessionsFlags extends DaemonFlags {
  json?: boolean;
}

/** `2026-01-31 09:05`, in local time. */
export function localMinute(epochMs: number): string {
  const at = new Date(epochMs);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}`;
}

/** The sessions as a table: id, last change, whether a client controls it now, title and workspace. */
export function sessionTable(sessions: readonly SessionSummary[]): string[] {
  const rows = [
    ['SESSION', 'UPDATED', 'CLAIMED', 'TITLE', 'WORKSPACE'],
    ...sessions.map((session) => [
      session.session_id,
      localMinute(session.updated_at),
      session.claimed ? 'yes' : 'no',
      (session.title ?? '').replace(/\s+/g, ' '),
      session.workspace,
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** `magid sessions`: every session of the home's daemon, oldest first; `--json`, one JSON line each. */
export async function sessions(
  flags: SessionsFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const say = (line: string) => err.write(`${line}\n`);
  try {
    const client = await connectDaemon(flags, say);
    const listed: SessionSummary[] = [];
    try {
      for await (const session of allSessions(client.wire)) {
        if (flags.json) out.write(`${JSON.stringify(session)}\n`);
        else listed.push(session);
      }
    } finally {
      client.close();
    }
    if (!flags.json) for (const line of sessionTable(listed)) out.write(`${line}\n`);
    return 0;
  } catch (error) {
    const failure = failureOf(error);
    say(`magid: ${failure.message}`);
    return failure.status;
  }
}
