import { connectSocket } from '../client/wire-client.js';

type Connected = Awaited<ReturnType<typeof connectSocket>>;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Connects to the daemon, or says that none is running there. */
async function reach(socketPath: string): Promise<Connected | null> {
  try {
    return await connectSocket(socketPath);
  } catch {
    print({ running: false });
    return null;
  }
}

/** `magid status`: asks the running daemon for its status over its socket. */
export async function status(socketPath: string): Promise<number> {
  const connection = await reach(socketPath);
  if (!connection) return 1;
  const { client, daemonPid } = connection;
  const init = await client.initialize([]);
  const result = await client.call('status');
  client.close();
  print({ running: true, pid: daemonPid, instance_id: init.instance_id, status: result });
  return 0;
}

/**
 * `magid stop`: connects, learns the daemon's pid from the socket's peer credentials (the same
 * check that proves the daemon runs as this user), asks it to drain with SIGTERM and waits.
 */
export async function stop(socketPath: string, waitMs = 15_000): Promise<number> {
  const connection = await reach(socketPath);
  if (!connection) return 1;
  const { client, daemonPid } = connection;
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

/** Whether a process `pid` exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
