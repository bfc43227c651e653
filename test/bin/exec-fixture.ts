import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { isAlive } from '../../config/daemon-record.js';
import { magidArguments } from '../helpers/magid-command.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';
import {
  childEnv,
  type Exit,
  MagidProcess,
  type StartedDaemon,
  shortTempDir,
  sleep,
  startDaemon,
} from '../process/spawn-daemon.js';

/** Sockets go to `<home>/run`, whatever the machine's runtime directory. */
export const ENV = { XDG_RUNTIME_DIR: '' };

/** A home (with `config`), a workspace with a note in it, and a scripted provider. */
export async function scene(t: Test, config: Record<string, unknown> | null = null) {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.md'), '# Notes\nTea is green.\n');
  if (config) writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  const provider = await ScriptedProvider.start(t);
  const providerArgs = ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'];
  return { root, home, workspace, provider, providerArgs };
}

/** `magid serve` on the home's default socket, with the scripted provider. */
export function serveHome(t: Test, home: string, providerArgs: readonly string[]): Promise<StartedDaemon> {
  return startDaemon(t, { socket: null, home, args: providerArgs, env: ENV });
}

/** The command's end and everything it printed. */
export interface Finished extends Exit {
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  /** Written to stdin, which is then closed; without it stdin is empty (/dev/null). */
  input?: string;
  env?: NodeJS.ProcessEnv;
}

/** `magid <args>` from the sources, in `cwd`, as a user runs it; killed if still running when the test ends. */
export function runMagidIn(t: Test, args: readonly string[], options: RunOptions): MagidProcess {
  const child = spawn('/usr/bin/env', [...WITHOUT_TEST_HOOKS, ...magidArguments(), ...args], {
    cwd: options.cwd,
    env: { ...childEnv(), ...ENV, ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  const magid = new MagidProcess(child);
  t.teardown(async () => {
    if (!magid.running) return;
    child.kill('SIGKILL');
    await magid.exited;
  });
  return magid;
}

/** Runs `magid <args>` to its end. */
export async function magid(t: Test, args: readonly string[], options: RunOptions): Promise<Finished> {
  const run = runMagidIn(t, args, options);
  const exit = await run.waitExit(60_000);
  return { ...exit, stdout: run.stdout, stderr: run.stderr };
}

/** Waits, in real time and bounded, until `magid`'s stderr says `text`. */
export async function saidOnStderr(run: MagidProcess, text: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!run.stderr.includes(text)) {
    if (!run.running) throw new Error(`magid ended before saying "${text}": ${run.stderr}`);
    if (Date.now() > until) throw new Error(`timed out waiting for "${text}" on stderr: ${run.stderr}`);
    await sleep(20);
  }
}

/** The pid of the daemon serving `home`, from its record. */
export function daemonPid(home: string): number {
  return (JSON.parse(readFileSync(join(home, 'run', 'daemon.json'), 'utf8')) as { pid: number }).pid;
}

/** Stops, when the test ends, a daemon that a command started in `home` (it outlives the command). */
export function stopLaunchedOnTeardown(t: Test, home: string): void {
  t.teardown(async () => {
    let pid: number;
    try {
      pid = daemonPid(home);
    } catch {
      return;
    }
    if (!isAlive(pid)) return;
    process.kill(pid, 'SIGTERM');
    const until = Date.now() + 15_000;
    while (isAlive(pid) && Date.now() < until) await sleep(50);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
}

/** An initialized connection to the home's daemon, for reading what a command left behind. */
export async function wireTo(t: Test, home: string): Promise<WireClient> {
  const { client } = await connectSocket(join(home, 'run', 'magid.sock'));
  t.teardown(() => client.close());
  await client.initialize([]);
  return client;
}

/** The user messages the provider received in request `index`. */
export function userMessages(provider: ScriptedProvider, index: number): string[] {
  const messages = provider.requests[index]!.body.messages as Array<{ role: string; content: string }>;
  return messages.filter((message) => message.role === 'user').map((message) => message.content);
}

/** The status of the session's last turn once its terminal is recorded (waited for, bounded). */
export async function terminalStatus(
  client: WireClient,
  session: string,
  timeoutMs = 20_000,
): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
    const records = replay.records as Array<{ kind: string; data: { status: string } }>;
    const terminal = records.findLast((record) => record.kind === 'turn.terminal');
    if (terminal) return terminal.data.status;
    if (Date.now() > until) throw new Error('the turn did not end');
    await sleep(50);
  }
}
