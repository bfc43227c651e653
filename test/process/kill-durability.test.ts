import { lstatSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { op } from '../helpers/daemon.js';
import { shortTempDir, startDaemon } from './spawn-daemon.js';

const SESSIONS = 25;
/** Smaller than the session count, so listing needs more than one page. */
const PAGE = 10;

function connectError(path: string): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(null);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'unknown'));
  });
}

async function listAll(client: WireClient): Promise<Array<Record<string, unknown>>> {
  const sessions: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const page = await client.call('session.list', { cursor, limit: PAGE });
    sessions.push(...(page.sessions as Array<Record<string, unknown>>));
    cursor = page.next_cursor as string | null;
  } while (cursor !== null);
  return sessions;
}

t.test('kill -9 loses no committed session, and the next daemon reclaims the stale socket', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(root, 'd.sock');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);

  const first = await startDaemon(t, { socket, home });
  const { client } = await connectSocket(socket);
  await client.initialize([]);
  const created = new Map<string, string>();
  for (let i = 0; i < SESSIONS; i++) {
    const title = `session ${i}`;
    const result = await client.call('session.create', { workspace, title }, { operation: op() });
    created.set(result.session_id as string, title);
  }
  t.equal(created.size, SESSIONS);

  first.magid.child.kill('SIGKILL');
  t.strictSame(await first.magid.waitExit(), { code: null, signal: 'SIGKILL' });
  t.ok(lstatSync(socket).isSocket(), 'the killed daemon left its socket behind');
  t.equal(await connectError(socket), 'ECONNREFUSED', 'nobody answers on it');

  const second = await startDaemon(t, { socket, home });
  t.equal(second.ready.socket, socket);
  t.not(second.ready.instance_id, first.ready.instance_id, 'a new instance');
  t.not(second.ready.pid, first.ready.pid);

  const { client: again, daemonPid } = await connectSocket(socket);
  t.equal(daemonPid, second.ready.pid, 'the reclaimed socket is served by the new daemon');
  const init = await again.initialize([]);
  t.equal(init.instance_id, second.ready.instance_id);

  const listed = await listAll(again);
  t.strictSame(
    new Map(listed.map((session) => [session.session_id as string, session.title as string])),
    created,
    'every created session is listed once, with its title',
  );
  t.equal(listed.length, SESSIONS, 'no duplicates');
  t.ok(
    listed.every((session) => session.workspace === workspace && session.claimed === false),
    'workspaces kept, nothing claimed after the restart',
  );

  for (const [sessionId, title] of created) {
    const replay = await again.call('session.replay', { cursor: null, limit: 1 }, { session: sessionId });
    const [record] = replay.records as Array<Record<string, unknown>>;
    t.match(
      record,
      { kind: 'session.created', data: { title }, omitted: false },
      `${sessionId} replays session.created`,
    );
  }
  again.close();

  second.magid.child.kill('SIGTERM');
  t.strictSame(await second.magid.waitExit(), { code: 0, signal: null });
});
