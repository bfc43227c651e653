import { spawn, spawnSync } from 'node:child_process';
import t, { type Test } from 'tap';
import { magidArguments } from '../helpers/magid-command.js';
import { childEnv } from '../process/spawn-daemon.js';
import { ENV, magid, scene, serveHome } from './exec-fixture.js';

t.setTimeout(120_000);

/** util-linux `script`, which runs a command under a real pseudo-terminal. */
const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
const noScript = script.status === 0 ? false : 'util-linux script is not installed';

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** `magid <args>` with stdin, stdout and stderr on one pseudo-terminal; everything it drew, and its exit. */
function underTerminal(
  t: Test,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
  unset: readonly string[] = [],
): Promise<{ code: number | null; drawn: string }> {
  // Unset inside the terminal: the test runner puts its own variables back into every child it spawns.
  const unsetting = ['NODE_OPTIONS', 'NODE_V8_COVERAGE', ...unset].flatMap((name) => ['-u', name]);
  const command = ['env', ...unsetting, process.execPath, ...magidArguments(), ...args].map(quote).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd,
    env: { ...childEnv(), ...ENV, TERM: 'xterm-256color', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  let drawn = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    drawn += text;
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, drawn })));
}

const ERASE = '\r\u001b[2K';
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
const ESC = String.fromCharCode(0x1b);
const char = (code: number) => String.fromCharCode(code);
/** A control sequence, and one that sets a color or a style. */
const SEQUENCE = new RegExp(`^${ESC}\\[([0-9;]*)([A-Za-z])`);
const STYLE = new RegExp(`${ESC}\\[[0-9;]*m`);
/** Any control character but the newline. */
const CONTROL = new RegExp(`[${char(0)}-${char(9)}${char(11)}-${char(31)}${char(127)}]`);

/** The lines a terminal shows once `drawn` has been written to it (carriage returns, erasures, colors). */
function screen(drawn: string): string[] {
  const lines: string[][] = [[]];
  let column = 0;
  for (let at = 0; at < drawn.length; at += 1) {
    const line = lines.at(-1)!;
    const rest = drawn.slice(at);
    const sequence = SEQUENCE.exec(rest);
    if (sequence) {
      if (sequence[2] === 'K') line.length = 0;
      at += sequence[0].length - 1;
    } else if (drawn[at] === '\r') column = 0;
    else if (drawn[at] === '\n') {
      lines.push([]);
      column = 0;
    } else {
      const [character] = [...rest];
      line[column] = character!;
      column += 1;
      at += character!.length - 1;
    }
  }
  return lines.map((line) => line.join('')).filter((line) => line !== '');
}

t.test(
  'on a terminal the status line is drawn while the turn runs and gone at its end',
  { skip: noScript },
  async (t) => {
    const { home, workspace, provider, providerArgs } = await scene(t);
    await serveHome(t, home, providerArgs);
    provider.replyToolCalls([{ id: 'c1', name: 'read_file', arguments: '{"path":"notes.md"}' }]);
    provider.reply(['It says ', 'tea is green.']);
    // The test runner asks its children for no color and CI machines set CI (which Node reads as a
    // terminal of two colors): a user's terminal does neither.
    const { code, drawn } = await underTerminal(
      t,
      ['exec', '--home', home, 'What does notes.md say?'],
      workspace,
      {},
      ['NO_COLOR', 'FORCE_COLOR', 'CI'],
    );
    t.equal(code, 0, drawn);
    t.match(
      drawn,
      new RegExp(`${ERASE.replace('[', '\\[')}(${ESC}\\[2m)?${SPINNER.source} \\d+s `),
      'the status line was drawn',
    );
    t.match(drawn, STYLE, 'in color');
    const shown = screen(drawn);
    t.match(shown, [/^session ses_\S+ · /, '→ read_file', '✓ read_file', 'It says tea is green.']);
    t.equal(shown.length, 4, 'nothing else is left on the screen');
    t.notOk(
      shown.some((line) => SPINNER.test(line)),
      'no status line is left',
    );
  },
);

t.test('NO_COLOR: the status line without a single color', { skip: noScript }, async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.reply(['Plain.']);
  const { code, drawn } = await underTerminal(t, ['exec', '--home', home, 'hello'], workspace, {
    NO_COLOR: '1',
  });
  t.equal(code, 0, drawn);
  t.match(drawn, ERASE, 'the status line was drawn');
  t.notMatch(drawn, STYLE, 'no color or style sequence');
  t.same(screen(drawn).slice(1), ['Plain.']);
});

t.test('under pipes no control character reaches stderr', async (t) => {
  const { home, workspace, provider, providerArgs } = await scene(t);
  await serveHome(t, home, providerArgs);
  provider.replyToolCalls([{ id: 'c1', name: 'read_file', arguments: '{"path":"notes.md"}' }]);
  provider.reply(['Green.']);
  const run = await magid(t, ['exec', '--home', home, 'What does notes.md say?'], { cwd: workspace });
  t.equal(run.code, 0, run.stderr);
  t.match(run.stderr, '✓ read_file');
  t.notMatch(run.stderr, CONTROL, 'nothing but text and newlines');
  t.notMatch(run.stdout, CONTROL);
});
