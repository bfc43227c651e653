import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { DESCRIPTOR_RESERVE } from '../../core/endpoint/descriptor-limit.js';
import { SERVICE_LIMITS } from '../../core/limits.js';
import { magidArguments } from '../helpers/magid-command.js';
import {
  childEnv,
  logLines,
  MagidProcess,
  PROJECT_ROOT,
  type ReadyLine,
  shortTempDir,
  startDaemon,
} from './spawn-daemon.js';

/** Connections opened at once; the rest wait for the batch before them to be answered. */
const BATCH = 50;
const ANSWER_TIMEOUT_MS = 5_000;

const INITIALIZE = `${JSON.stringify({
  type: 'request',
  id: 'r1',
  method: 'initialize',
  session_id: null,
  control_token: null,
  operation_id: null,
  payload: { wire: 2, client: { name: 'limit-test', version: '1' }, requested_capabilities: [] },
})}\n`;

/** What one connect-and-initialize saw. */
type Outcome =
  | { kind: 'served'; socket: Socket; instanceId: string }
  | { kind: 'refused'; received: string; end: 'end' | 'error' }
  | { kind: 'broken'; detail: string };

/**
 * Connects and sends initialize at once, as a client that does not know whether it will be served.
 * Served: the initialize answer arrives (the socket stays open). Refused: bytes until the daemon ends.
 */
function attempt(path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(path);
    let received = '';
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (outcome.kind !== 'served') socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ kind: 'broken', detail: `no answer and no end within ${ANSWER_TIMEOUT_MS} ms` }),
      ANSWER_TIMEOUT_MS,
    );
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(INITIALIZE));
    socket.on('data', (text: string) => {
      received += text;
      const line = received.split('\n')[0]!;
      if (received.includes('\n') && line.includes('"id":"r1"')) {
        const frame = JSON.parse(line) as { ok: boolean; result: { instance_id: string } };
        if (frame.ok) finish({ kind: 'served', socket, instanceId: frame.result.instance_id });
        else finish({ kind: 'broken', detail: line });
      }
    });
    socket.on('end', () => finish({ kind: 'refused', received, end: 'end' }));
    socket.on('error', () => finish({ kind: 'refused', received, end: 'error' }));
  });
}

async function attemptAll(t: Test, path: string, count: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  t.teardown(() => {
    for (const outcome of outcomes) if (outcome.kind === 'served') outcome.socket.destroy();
  });
  for (let start = 0; start < count; start += BATCH) {
    const batch = Math.min(BATCH, count - start);
    outcomes.push(...(await Promise.all(Array.from({ length: batch }, () => attempt(path)))));
  }
  return outcomes;
}

/** Checks that `outcomes` are `served` answers followed by refusals, each refusal one frame then EOF. */
function checkOutcomes(t: Test, outcomes: Outcome[], ready: ReadyLine, served: number): void {
  const broken = outcomes.filter((outcome) => outcome.kind === 'broken');
  t.strictSame(broken, [], 'every attempt was either served or refused');
  const answered = outcomes.filter((outcome) => outcome.kind === 'served');
  const refused = outcomes.filter((outcome) => outcome.kind === 'refused');
  t.equal(answered.length, served, `${served} connections served`);
  t.equal(refused.length, outcomes.length - served, `the other ${outcomes.length - served} refused`);
  t.ok(
    answered.every((outcome) => outcome.instanceId === ready.instance_id),
    'each served one was initialized by this daemon',
  );
  const expected = `${JSON.stringify({
    type: 'response',
    id: null,
    instance_id: ready.instance_id,
    ok: false,
    error: {
      code: 'limit_exceeded',
      message: 'the daemon serves as many connections as it can; retry later',
    },
  })}\n`;
  t.ok(
    refused.every((outcome) => outcome.received === expected),
    'each refused one received exactly the one limit_exceeded frame',
  );
  t.ok(
    refused.every((outcome) => outcome.end === 'end'),
    'and then an orderly end, never a reset',
  );
}

async function stop(magid: MagidProcess, outcomes: Outcome[]): Promise<Array<Record<string, unknown>>> {
  for (const outcome of outcomes) if (outcome.kind === 'served') outcome.socket.destroy();
  magid.child.kill('SIGTERM');
  await magid.waitExit();
  return logLines(magid.stderr);
}

t.test('600 connections of the same user: 512 are served, 88 refused with a frame', async (t) => {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const { magid, ready } = await startDaemon(t, { socket, home: join(root, 'home') });

  const outcomes = await attemptAll(t, socket, 600);
  checkOutcomes(t, outcomes, ready, SERVICE_LIMITS.connections);

  const status = readFileSync(`/proc/${ready.pid}/status`, 'utf8');
  const rss = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  t.ok(rss, 'the daemon reports its resident set');
  t.comment(`daemon RSS with ${SERVICE_LIMITS.connections} idle connections: ${rss} kB`);
  const descriptors = readdirSync(`/proc/${ready.pid}/fd`).length;
  t.comment(`daemon descriptors open: ${descriptors}`);
  t.ok(
    descriptors <= SERVICE_LIMITS.connections + DESCRIPTOR_RESERVE,
    'the daemon’s own files fit in the reserve',
  );

  const logs = await stop(magid, outcomes);
  const listening = logs.find((line) => line.msg === 'listening');
  t.equal(
    listening?.connections_max,
    SERVICE_LIMITS.connections,
    'the ready log line says how many are served',
  );
  t.type(listening?.open_files_limit, 'number', 'and the open files limit');
  t.equal(
    logs.filter((line) => line.msg === 'connection refused' && line.reason === 'connection_limit').length,
    88,
    'each refusal is logged with its reason',
  );
});

/** `magid serve` under a shell that lowered the open files limit first. */
function serveWithOpenFiles(t: Test, openFiles: number, socket: string, home: string): MagidProcess {
  const magid = new MagidProcess(
    spawn(
      '/bin/sh',
      [
        '-c',
        `ulimit -n ${openFiles} && exec "$@"`,
        'sh',
        ...['/usr/bin/env', '-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE', process.execPath],
        ...magidArguments(),
        ...['serve', '--socket', socket, '--home', home],
      ],
      { cwd: PROJECT_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  t.teardown(async () => {
    if (!magid.running) return;
    magid.child.kill('SIGKILL');
    await magid.exited;
  });
  return magid;
}

t.test('a low open files limit narrows the connections served and says so', async (t) => {
  const openFiles = 200;
  const served = openFiles - DESCRIPTOR_RESERVE;
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const magid = serveWithOpenFiles(t, openFiles, socket, join(root, 'home'));
  const ready = JSON.parse(await magid.firstLine()) as ReadyLine;

  const outcomes = await attemptAll(t, socket, served + 10);
  checkOutcomes(t, outcomes, ready, served);

  const logs = await stop(magid, outcomes);
  const warning = logs.find((line) => line.level === 40 && line.open_files_limit !== undefined);
  t.match(
    warning,
    {
      open_files_limit: openFiles,
      open_files_wanted: SERVICE_LIMITS.connections + DESCRIPTOR_RESERVE,
      connections_max: served,
    },
    'a warning names the limit, what the wire needs, and what is served',
  );
  t.match(
    logs.find((line) => line.msg === 'listening'),
    { connections_max: served, open_files_limit: openFiles },
  );
});
