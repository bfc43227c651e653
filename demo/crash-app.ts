/**
 * The application of `npm run demo:crash`, started twice by demo/crash.ts. It keeps its executor in a
 * file store and journals each note it finds before answering.
 *
 *   crash-app.ts start SOCKET HOME WORKSPACE STORE JOURNAL   a turn whose handler never answers
 *   crash-app.ts restart SOCKET HOME WORKSPACE STORE JOURNAL resume, deliver from the journal, report
 *
 * Each step is one JSON line on stdout.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { fileStore, MagiClient, type ToolHandler } from '../client/index.js';
import { FIND_NOTE_PATH, findNote } from './workspace.js';

const [mode, socket, home, workspace, storePath, journal] = process.argv.slice(2) as string[] as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const print = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);

/** What the handler journaled, by call id: the effect it had before the process could answer. */
function journaled(): Map<string, { path: string }> {
  if (!existsSync(journal)) return new Map();
  const entries = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
  return new Map(entries.map((line) => JSON.parse(line)).map((entry) => [entry.call_id, entry.result]));
}

const client = await MagiClient.connect({ home, socket, client: { name: 'magi-demo-crash', version: '1' } });
const store = fileStore(storePath);

if (mode === 'start') {
  const session = await client.createSession(workspace, 'crash demo');
  await session.registerTool({
    name: 'find_note',
    description: 'Find the note about a subject; returns its path',
    source: { kind: 'workspace_file', path: FIND_NOTE_PATH },
  });
  const hang: ToolHandler = (args, call) => {
    const result = findNote(workspace, String(args.query));
    appendFileSync(journal, `${JSON.stringify({ call_id: call.callId, result })}\n`);
    print({ step: 'handler_ran', args, result });
    return new Promise(() => {}); // the process is killed before it answers
  };
  const executor = await client.startExecutor({ find_note: hang }, { store });
  const turn = await session.startTurn('Where is my note about tea?', { executor });
  print({ step: 'turn_started', turn_id: turn.accepted.turn_id, executor_id: executor.id });
} else {
  const rerun: ToolHandler = (args) => {
    print({ step: 'handler_ran', args });
    return findNote(workspace, String(args.query));
  };
  const resumed = await client.resumeExecutor(
    { find_note: rerun },
    {
      store,
      onInterrupted: (call) => {
        const kept = journaled().get(call.callId);
        print({ step: 'interrupted_call', call_id: call.callId, kept: kept ?? null });
        return kept === undefined ? { run: true } : { value: kept };
      },
    },
  );
  if (resumed === null || resumed.executor === null) throw new Error('nothing to resume');
  print({ step: 'resumed', generation: resumed.executor.generation, pending: resumed.pending.length });
  const { session_id, turn_id } = resumed.turns.at(-1)!;
  const session = resumed.sessions.get(session_id) ?? (await client.claimSession(session_id));
  const terminal = await session.terminal(turn_id);
  const evidence = await session.evidence(turn_id);
  print({ step: 'done', terminal, calls: evidence.calls });
  await resumed.executor.close();
  client.close();
}
