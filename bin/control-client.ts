import { connectSocket } from '../client/wire-client.js';
import { isAlive } from '../config/daemon-record.js';
import type { DaemonTarget } from '../config/settings.js';

type Connected = Awaited<ReturnType<typeof connectSocket>>;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/**
 * Connects to the daemon and checks it serves the home asked for, or says that none is running there
 * (a daemon of another home is not this home's: it is left alone).
 */
async function reach(target: DaemonTarget): Promise<{ connected: Connected; instanceId: string } | null> {
  let connected: Connected;
  try {
    connected = await connectSocket(target.socket);
  } catch {
    print({ running: false });
    return null;
  }
  const init = await connected.client.initialize([]);
  if (target.homeId !== null && init.home_id !== target.homeId) {
    connected.client.close();
    process.stderr.write(`magid: the daemon at ${target.socket} serves another home\n`);
    print({ running: false });
    return null;
  }
  return { connected, instanceId: String(init.instance_id) };
}

/** `magid status`: asks the running daemon for its status over its socket. */
export async function status(target: DaemonTarget): Promise<number> {
  const reached = await reach(target);
  if (!reached) return 1;
  const { client, daemonPid } = reached.connected;
  const result = await client.call('status');
  client.close();
  print({ running: true, pid: daemonPid, instance_id: reached.instanceId, status: result });
  return 0;
}

/**
 * `magid stop`: connects, learns the daemon's pid from the socket's peer credentials (the same
 * check that proves the daemon runs as this user), asks it to drain with SIGTERM and waits.
 */
export async function stop(target: DaemonTarget, waitMs = 15_000): Promise<number> {
  const reached = await reach(target);
  if (!reached) return 1;
  const { client, daemonPid } = reached.connected;
  client.close();
  process.kill(daemonPid, 'SIGTERM');
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if (!isAlive(daemonPid)) {
      print({ stopped: true, pid: daemonPid });
      return 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.stderr.write('magid: the daemon did not stop in time\n');
  return 1;
}
