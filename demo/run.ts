import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import {
  type ApplicationExecutor,
  MagiClient,
  type TerminalPayload,
  type TurnEvent,
} from '../client/index.js';
import * as report from './report.js';
import { type ScriptedProvider, startScriptedProvider } from './scripted-provider.js';
import { FIND_NOTE_PATH, findNote, writeWorkspace } from './workspace.js';

const PROMPT = 'Where is my note about tea?';
/** The second turn: the model reads a workspace file with the daemon's own `read_file`. */
const READ_PROMPT = 'What does notes/tea.md say?';

const options = new Command('demo')
  .description(
    'run magid with an example application: one tool from a workspace file, one skill, a turn that calls the tool and one that reads a file',
  )
  .option(
    '--provider-base-url <url>',
    'a real OpenAI-compatible provider (default: a scripted one on loopback)',
  )
  .option('--model <name>', 'the model to ask', 'scripted-model')
  .parse()
  .opts<{ providerBaseUrl?: string; model: string }>();

/** Everything the demo started, undone in reverse order whatever happens. */
const cleanup: Array<() => unknown> = [];
let cleaned: Promise<void> | null = null;
function cleanUp(): Promise<void> {
  cleaned ??= (async () => {
    for (const undo of cleanup.reverse())
      await Promise.resolve()
        .then(undo)
        .catch(() => {});
  })();
  return cleaned;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().then(() => process.exit(130)));
}

async function main(): Promise<boolean> {
  const root = mkdtempSync(join(tmpdir(), 'magi-demo-'));
  cleanup.push(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const workspace = join(root, 'workspace');
  mkdirSync(home, { mode: 0o700 });
  writeWorkspace(workspace);

  process.stdout.write('magi demo\n');
  let baseUrl = options.providerBaseUrl;
  if (baseUrl === undefined) {
    const provider: ScriptedProvider = await startScriptedProvider();
    cleanup.push(() => provider.close());
    baseUrl = provider.baseUrl;
    report.step('scripted model provider listening on loopback');
  }

  report.step('starting magid on its embedded defaults in a temporary home…');
  const client = await MagiClient.connect({
    home,
    socket: join(root, 'magid.sock'),
    launch: true,
    serveArgs: ['--provider-base-url', baseUrl, '--model', options.model],
    client: { name: 'magi-demo', version: '1' },
  });
  cleanup.push(() => client.launched?.stop());
  cleanup.push(() => client.close());
  report.step(`magid ${client.initialized.daemon.version} ready (pid ${client.launched?.pid})`);
  cleanup.push(() => {
    if (failed) process.stderr.write(daemonLog(home));
  });

  const session = await client.createSession(workspace, 'demo');
  report.step('session created and claimed');
  await session.registerTool({
    name: 'find_note',
    description: 'Find the note about a subject; returns its path',
    source: { kind: 'workspace_file', path: FIND_NOTE_PATH },
  });
  report.step(`tool find_note registered from ${FIND_NOTE_PATH}`);
  await session.registerSkill({
    name: 'brief',
    description: 'Keep answers short',
    source: { kind: 'inline', content: 'Answer in one short sentence.' },
  });
  report.step('skill brief registered');

  const executor: ApplicationExecutor = await client.startExecutor({
    find_note: (args) => {
      const found = findNote(workspace, String(args.query));
      report.step(`executor ran find_note ${JSON.stringify(args)} → ${JSON.stringify(found)}`);
      return found;
    },
  });
  cleanup.push(() => executor.close());
  report.step('executor created and confirmed');

  const turn = await session.startTurn(PROMPT, { executor });
  report.step(`turn started: "${PROMPT}"`);
  const terminal = await follow(turn.events);
  const evidence = await session.evidence(turn.accepted.turn_id);

  report.transcript(PROMPT, terminal);
  report.manifest(turn.accepted.application_manifest);
  report.calls(evidence.calls);
  report.outcome(terminal);

  const reading = await session.startTurn(READ_PROMPT, { executor });
  report.step(`second turn started: "${READ_PROMPT}"`);
  const read = await follow(reading.events);
  report.transcript(READ_PROMPT, read);
  report.outcome(read);
  return (
    terminal.status === 'completed' &&
    evidence.calls.every((call) => call.status === 'succeeded') &&
    read.status === 'completed'
  );
}

/** Reports a turn's events as they come; resolves with its terminal. */
async function follow(events: AsyncIterable<TurnEvent>): Promise<TerminalPayload> {
  let terminal: TerminalPayload | null = null;
  for await (const event of events) {
    if (event.event === 'turn.activity' && event.payload.activity.kind === 'tool_call') {
      report.step(`call ${event.payload.activity.status}`);
    } else if (event.event === 'turn.activity' && event.payload.activity.kind === 'tool_call_requested') {
      report.step('the model asked for a tool');
    } else if (event.event === 'turn.assistant_delta') {
      report.step(`answer: ${JSON.stringify(event.payload.delta)}`);
    } else if (event.event === 'turn.terminal') {
      terminal = event.payload;
    }
  }
  return terminal!;
}

/** The end of the daemon's log, to explain a failed run. */
function daemonLog(home: string): string {
  try {
    return `\nmagid log (last lines):\n${readFileSync(join(home, 'magid.log'), 'utf8').split('\n').slice(-20).join('\n')}\n`;
  } catch {
    return '';
  }
}

let failed = true;
try {
  failed = !(await main());
} catch (error) {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  await cleanUp();
}
process.stdout.write(
  failed
    ? 'demo failed; everything it started was stopped and removed\n'
    : 'magid stopped; temporary home removed\n',
);
process.exitCode = failed ? 1 : 0;
