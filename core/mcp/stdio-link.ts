import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type Clock, type Deadline, deadlineAt } from '../clock.js';
import { MCP_SUPERVISION } from './mcp-limits.js';
import type { McpStdioServerConfig } from './mcp-types.js';
import type { ServerLink } from './server-link.js';
import type { ServerText } from './server-text.js';
import { StderrTail } from './stderr-tail.js';

/** Records the child's pid as soon as it is spawned: the SDK forgets it once it closes the transport. */
class ChildTransport extends StdioClientTransport {
  spawnedPid: number | undefined;

  override start(): Promise<void> {
    const started = super.start();
    // The process is spawned synchronously inside `start`; a command that cannot run has no pid.
    this.spawnedPid = this.pid ?? undefined;
    return started;
  }
}

/**
 * A child process speaking MCP over stdio. It gets the SDK's small default environment plus the configured
 * `env`, never the daemon's, and starts in `cwd`; the last of what it writes to stderr is kept for the log.
 */
export class StdioLink implements ServerLink {
  readonly transport: ChildTransport;
  readonly #clock: Clock;
  readonly #stderr: StderrTail;

  /** `text` redacts what the child writes on stderr. */
  constructor(config: McpStdioServerConfig, cwd: string, clock: Clock, text: ServerText) {
    this.#clock = clock;
    this.#stderr = new StderrTail(text.redact);
    this.transport = new ChildTransport({
      command: config.command,
      args: [...config.args],
      env: { ...config.env },
      cwd,
      stderr: 'pipe',
      maxBufferSize: MCP_SUPERVISION.message_bytes,
    });
    // A listener puts the pipe in flowing mode: a flood is read and only its tail kept, never buffered.
    this.transport.stderr?.on('data', (chunk: Buffer) => this.#stderr.append(chunk));
  }

  get opened(): boolean {
    return this.transport.spawnedPid !== undefined;
  }

  stderrLines(): string[] {
    return this.#stderr.lines();
  }

  /**
   * SIGTERM, then SIGKILL after the grace on the clock; settles once the child is gone, or one more grace
   * after SIGKILL if its pipes stay open (a process it started may hold them), so stopping always ends.
   */
  async stop(closed: Promise<void>, hasClosed: () => boolean): Promise<void> {
    const grace = MCP_SUPERVISION.kill_grace_ms;
    const deadlines: Deadline[] = [];
    const givenUp = new Promise<void>((resolve) => {
      const start = this.#clock.now();
      if (!hasClosed()) this.#signal('SIGTERM');
      deadlines.push(
        deadlineAt(this.#clock, start + grace, () => {
          if (!hasClosed()) this.#signal('SIGKILL');
        }),
        deadlineAt(this.#clock, start + 2 * grace, resolve),
      );
    });
    await Promise.race([closed, givenUp]);
    for (const deadline of deadlines) deadline.cancel();
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.transport.spawnedPid;
    if (pid === undefined) return;
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
