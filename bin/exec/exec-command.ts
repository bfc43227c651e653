import { type Command, InvalidArgumentError } from 'commander';
import { EXIT } from './exec-errors.js';

/** What `magid exec` was asked to do. */
export interface ExecSettings {
  /** The prompt argument: absent, `-` (standard input) or the prompt. */
  prompt?: string;
  home?: string;
  socket?: string;
  workspace?: string;
  session?: string;
  model?: string;
  providerBaseUrl?: string;
  json?: boolean;
  outputLastMessage?: string;
  timeoutMs?: number;
}

const UNITS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const LONGEST_MS = 24 * 3_600_000;

/** `90`, `90s`, `1500ms`, `2m`, `1h`: a positive duration of at most a day, in seconds when it has no unit. */
export function parseDuration(value: string): number {
  const match = /^(\d{1,9}(?:\.\d{1,3})?)(ms|s|m|h)?$/.exec(value);
  const ms = match
    ? Math.round(Number(match[1]) * UNITS[(match[2] ?? 's') as keyof typeof UNITS])
    : Number.NaN;
  if (!(ms >= 1 && ms <= LONGEST_MS)) {
    throw new InvalidArgumentError('expected a duration such as 90, 90s, 1500ms, 2m or 1h (at most 24h)');
  }
  return ms;
}

/** Bad usage exits 2, as a refusal does; help exits 0. */
export function usageExits(command: Command): Command {
  return command.exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT.refused));
}

/** Declares `magid exec` on `program`; `run` gets the settings and returns the exit status. */
export function declareExec(program: Command, run: (settings: ExecSettings) => Promise<number>): void {
  usageExits(
    program
      .command('exec')
      .description('run one turn: the answer on stdout, what the agent does on stderr')
      .argument(
        '[prompt]',
        'the prompt; with "-" or none, standard input (which is also appended when piped)',
      )
      .option('--home <dir>', 'the daemon home (default ~/.magi)')
      .option('--socket <path>', 'the daemon socket (default: where the home’s daemon listens)')
      .option('--workspace <dir>', 'the workspace of a new session (default: the current directory)')
      .option('--session <id>', 'continue a session instead of starting one')
      .option('--model <name>', 'the model of this turn')
      .option('--provider-base-url <url>', 'the provider of a daemon this command starts')
      .option('--json', 'print every event as one JSON line on stdout')
      .option('-o, --output-last-message <file>', 'write the final answer to this file')
      .option('--timeout <duration>', 'stop the turn after this long (90, 90s, 2m…)', parseDuration),
  ).action(
    async (
      prompt: string | undefined,
      flags: Omit<ExecSettings, 'prompt' | 'timeoutMs'> & { timeout?: number },
    ) => {
      const { timeout, ...rest } = flags;
      process.exit(await run({ ...rest, prompt, ...(timeout === undefined ? {} : { timeoutMs: timeout }) }));
    },
  );
}
