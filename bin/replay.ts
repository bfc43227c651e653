import { connectDaemon, type DaemonFlags } from './daemon-client.js';
import { failureOf } from './exec/exec-errors.js';
import { allRecords } from './history-pages.js';
import { Transcript } from './transcript.js';

export interface ReplayFlags extends DaemonFlags {
  json?: boolean;
}

/**
 * `magid replay SESSION`: the session's history as a transcript (prompts, tool calls with their outcome,
 * answers), or with `--json` each record as `session.replay` returns it, one JSON line each.
 */
export async function replay(
  sessionId: string,
  flags: ReplayFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const say = (line: string) => err.write(`${line}\n`);
  try {
    const client = await connectDaemon(flags, say);
    try {
      const transcript = new Transcript((line) => out.write(`${line}\n`));
      for await (const record of allRecords(client.wire, sessionId)) {
        if (flags.json) out.write(`${JSON.stringify(record)}\n`);
        else transcript.add(record);
      }
    } finally {
      client.close();
    }
    return 0;
  } catch (error) {
    const failure = failureOf(error);
    say(`magid: ${failure.message}`);
    return failure.status;
  }
}
