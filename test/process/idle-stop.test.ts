import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { logLines, shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

/** Long enough that the test connects after the ready line well before the first idle stop could fire. */
const IDLE_TIMEOUT_MS = 500;

t.test('an open connection keeps the daemon; once it closes the daemon stops on its own', async (t) => {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const { magid, ready } = await startDaemon(t, {
    socket,
    home: join(root, 'home'),
    args: ['--idle-timeout-ms', String(IDLE_TIMEOUT_MS)],
  });
  const { client, socket: connection } = await connectSocket(socket);
  await client.initialize([]);

  await sleep(IDLE_TIMEOUT_MS * 3);
  t.ok(magid.running, 'still running with a connection open');
  t.equal((await client.call('status')).sessions, 0, 'and still serving it');

  const closed = new Promise<void>((resolve) => connection.once('close', () => resolve()));
  // The daemon's idle timer cannot start before the client closes.
  const closingAt = performance.now();
  client.close();
  await closed;
  t.strictSame(await magid.waitExit(5_000), { code: 0, signal: null }, 'exits 0 within a few seconds');
  t.ok(performance.now() - closingAt >= IDLE_TIMEOUT_MS, 'not before the idle timeout elapsed');
  t.notOk(existsSync(socket), 'the socket is removed');
  t.ok(logLines(magid.stderr).some((line) => line.msg === 'stopping' && line.reason === 'idle'));
  t.equal(magid.stdout, `${JSON.stringify(ready)}\n`);
});

/** What one connect-and-initialize attempt saw. */
type Outcome = { kind: 'served' } | { kind: 'refused'; how: string } | { kind: 'broken'; detail: string };

const ATTEMPT_TIMEOUT_MS = 3_000;

function attempt(path: string, instanceId: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(path);
    let bytes = '';
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ kind: 'broken', detail: `no answer and no close within ${ATTEMPT_TIMEOUT_MS} ms` }),
      ATTEMPT_TIMEOUT_MS,
    );
    socket.on('connect', () => {
      socket.write(
        `${JSON.stringify({
          type: 'request',
          id: 'init',
          method: 'initialize',
          session_id: null,
          control_token: null,
          operation_id: null,
          payload: { wire: 2, client: { name: 'race', version: '1' }, requested_capabilities: [] },
        })}\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.toString('utf8');
      const end = bytes.indexOf('\n');
      if (end === -1) return;
      const line = bytes.slice(0, end);
      let frame: { id?: unknown; ok?: unknown; result?: { instance_id?: unknown } } = {};
      try {
        frame = JSON.parse(line);
      } catch {
        // Not JSON: reported as a foreign answer below.
      }
      if (frame.id === 'init' && frame.ok === true && frame.result?.instance_id === instanceId) {
        finish({ kind: 'served' });
      } else finish({ kind: 'broken', detail: `answered ${line}` });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (bytes === '') finish({ kind: 'refused', how: error.code ?? 'error' });
      else finish({ kind: 'broken', detail: `error after a partial frame: ${JSON.stringify(bytes)}` });
    });
    socket.on('close', () => {
      if (bytes === '') finish({ kind: 'refused', how: 'closed' });
      else finish({ kind: 'broken', detail: `closed after a partial frame: ${JSON.stringify(bytes)}` });
    });
  });
}

const RACE_IDLE_TIMEOUT_MS = 300;
/** Each round waits this much longer before its burst, sweeping across the moment the timer fires. */
const LEAD_STEP_MS = 1;
const MAX_ROUNDS = 30;
const RACE_BUDGET_MS = 12_000;
/** Attempts per round, started one millisecond apart around the moment the idle stop is due. */
const BURST = 12;

t.test('connects racing the idle stop are served fully or fail cleanly', async (t) => {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const { magid, ready } = await startDaemon(t, {
    socket,
    home: join(root, 'home'),
    args: ['--idle-timeout-ms', String(RACE_IDLE_TIMEOUT_MS)],
  });
  // The idle timer runs from before the ready line: the first attempt goes at once and restarts it.
  const outcomes: Outcome[] = [await attempt(socket, ready.instance_id)];
  const started = performance.now();
  let rounds = 0;
  // Each round waits for about the idle timeout after the previous round's last connection closed, a little
  // longer every round, then fires a burst of attempts: sooner or later the first of them meets the stop.
  while (magid.running && rounds < MAX_ROUNDS && performance.now() - started < RACE_BUDGET_MS) {
    rounds++;
    await sleep(RACE_IDLE_TIMEOUT_MS - 6 + rounds * LEAD_STEP_MS);
    const burst: Array<Promise<Outcome>> = [];
    for (let i = 0; i < BURST; i++) {
      burst.push(attempt(socket, ready.instance_id));
      await sleep(1);
    }
    outcomes.push(...(await Promise.all(burst)));
  }
  const exit = await magid.waitExit(5_000);
  const after = await attempt(socket, ready.instance_id);
  const count = (kind: Outcome['kind']) => outcomes.filter((outcome) => outcome.kind === kind).length;
  const refusals = outcomes.flatMap((outcome) => (outcome.kind === 'refused' ? [outcome.how] : []));
  t.comment(`${rounds} rounds: ${count('served')} served, refused: ${[...new Set(refusals)].join(', ')}`);
  t.strictSame(
    outcomes.filter((outcome) => outcome.kind === 'broken'),
    [],
    'no attempt got a partial or foreign answer, or hung',
  );
  t.ok(count('served') > 0, 'attempts before the stop were served');
  t.strictSame(exit, { code: 0, signal: null }, 'the daemon stopped on idle and exited 0');
  t.equal(after.kind, 'refused', 'after the stop, connecting fails cleanly');
  t.notOk(existsSync(socket), 'the socket is removed');
});
