import { Command, InvalidArgumentError } from 'commander';
import { DAEMON } from '../config/daemon.js';
import { daemonTarget, serveSettings, stdioSettings } from '../config/settings.js';
import { declareExec, usageExits } from './exec/exec-command.js';

// Each command loads its own modules when it runs: the daemon's (serve, stdio) take most of a second to
// load, which `magid exec`, `status` and the rest would otherwise pay on every start.

function nonNegativeInteger(value: string): number {
  if (!/^\d{1,10}$/.test(value)) throw new InvalidArgumentError('expected a whole number of milliseconds');
  return Number(value);
}

const program = new Command('magid').description('the magi daemon').version(DAEMON.version);

/** The options `serve` and `stdio` share: the home, the provider and the log level. */
function daemonOptions(command: Command): Command {
  return command
    .option('--home <dir>', 'the daemon home (default ~/.magi)')
    .option('--provider-base-url <url>', 'an OpenAI-compatible Chat Completions base URL')
    .option('--model <name>', 'the model to ask when no setting selects one')
    .option('--log-level <level>', 'pino log level', 'info');
}

daemonOptions(
  program
    .command('serve')
    .description('run the daemon in the foreground')
    .option('--socket <path>', 'the Unix socket to listen on'),
)
  .option(
    '--idle-timeout-ms <ms>',
    'stop after this long with no connection and no work (0: never)',
    nonNegativeInteger,
  )
  .option('--debug-http', 'serve read-only debug routes over plain HTTP on the same socket')
  .action(async (flags) => {
    const { serve } = await import('./serve.js');
    process.exit(await serve(serveSettings(flags)));
  });

daemonOptions(
  program.command('stdio').description('serve one client, the parent process, over stdin and stdout'),
).action(async (flags) => {
  const { stdio } = await import('./stdio.js');
  process.exit(await stdio(stdioSettings(flags)));
});

for (const [name, description] of [
  ['status', 'show the running daemon status'],
  ['stop', 'ask the running daemon to drain and exit'],
] as const) {
  program
    .command(name)
    .description(description)
    .option('--socket <path>', 'the daemon socket')
    .option('--home <dir>', 'the daemon home, to find its default socket')
    .action(async (flags) => {
      const run = (await import('./control-client.js'))[name];
      process.exitCode = await run(await daemonTarget(flags));
    });
}

declareExec(program, async (settings) => (await import('./exec/run-exec.js')).exec(settings));

usageExits(
  program
    .command('sessions')
    .description("list the daemon's sessions, oldest first")
    .option('--home <dir>', 'the daemon home (default ~/.magi)')
    .option('--socket <path>', 'the daemon socket')
    .option('--json', 'one JSON line per session'),
).action(async (flags) => {
  const { sessions } = await import('./sessions.js');
  process.exitCode = await sessions(flags);
});

usageExits(
  program
    .command('replay')
    .description("show a session's history: prompts, tool calls with their outcome, answers")
    .argument('<session>', 'the session id (`magid sessions` lists them)')
    .option('--home <dir>', 'the daemon home (default ~/.magi)')
    .option('--socket <path>', 'the daemon socket')
    .option('--json', 'one JSON line per history record, as session.replay returns it'),
).action(async (session: string, flags) => {
  const { replay } = await import('./replay.js');
  process.exitCode = await replay(session, flags);
});

usageExits(
  program.command('schema').description('print the wire protocol as one JSON Schema 2020-12 document'),
).action(async () => {
  const { schema } = await import('./schema.js');
  process.exitCode = await schema();
});

await program.parseAsync();
