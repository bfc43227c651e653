import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket, type ResponseFrame } from '../../client/wire-client.js';
import { logLines, shortTempDir, startDaemon } from './spawn-daemon.js';

const PIPELINED_REQUESTS = 50;

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} drains: requests sent before it are answered whole, then exit 0`, async (t) => {
    const root = shortTempDir(t);
    const socket = join(root, 'd.sock');
    const { magid, ready } = await startDaemon(t, { socket, home: join(root, 'home') });
    const { client, socket: connection } = await connectSocket(socket);
    await client.initialize([]);
    t.equal((await client.call('status')).sessions, 0, 'served before the signal');

    const ended = new Promise<void>((resolve) => connection.once('close', () => resolve()));
    const ids: string[] = [];
    for (let i = 0; i < PIPELINED_REQUESTS; i++) ids.push(client.send('status'));
    magid.child.kill(signal);

    await ended;
    t.strictSame(await magid.waitExit(), { code: 0, signal: null }, 'exits 0');
    t.notOk(existsSync(socket), 'the socket path is gone');

    // Every byte received is a whole response line; each request got at most one answer, ok or shutting_down.
    const frames = client.received.map((line) => JSON.parse(line) as ResponseFrame);
    const answers = frames.slice(2);
    t.ok(
      answers.every(
        (frame) =>
          frame.type === 'response' &&
          frame.instance_id === ready.instance_id &&
          (frame.ok || frame.error?.code === 'shutting_down'),
      ),
      'answers are results or shutting_down',
    );
    const answered = answers.map((frame) => frame.id);
    t.equal(new Set(answered).size, answered.length, 'no request answered twice');
    t.ok(
      answered.every((id) => id !== null && ids.includes(id)),
      'every answer is for a request that was sent',
    );
    const served = answers.filter((frame) => frame.ok).length;
    t.comment(`${served} served, ${answers.length - served} refused, of ${PIPELINED_REQUESTS} pipelined`);

    const logs = logLines(magid.stderr);
    t.ok(logs.some((line) => line.msg === 'stopping' && line.reason === signal));
    t.ok(logs.some((line) => line.msg === 'stopped'));
  });
}
