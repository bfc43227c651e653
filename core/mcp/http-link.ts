import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Clock, deadlineAt } from '../clock.js';
import { boundedFetch } from './bounded-fetch.js';
import { MCP_SUPERVISION } from './mcp-limits.js';
import type { McpHttpServerConfig } from './mcp-types.js';
import type { ServerLink } from './server-link.js';

/** The SDK would reopen a dropped event stream on its own timers; the supervisor reconnects instead. */
const NO_RECONNECTION = {
  maxRetries: 0,
  initialReconnectionDelay: 0,
  maxReconnectionDelay: 0,
  reconnectionDelayGrowFactor: 1,
};

/**
 * A server reached over the protocol's Streamable HTTP transport at its configured URL, with its headers
 * on every request. Redirects are followed only within the URL's origin (the SDK's policy), so headers never
 * reach another host; each message it sends is bounded like a child's.
 */
export class HttpLink implements ServerLink {
  readonly transport: StreamableHTTPClientTransport;
  readonly opened = true;
  readonly #clock: Clock;

  constructor(config: McpHttpServerConfig, clock: Clock) {
    this.#clock = clock;
    this.transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: { ...config.headers } },
      fetch: boundedFetch(MCP_SUPERVISION.message_bytes),
      reconnectionOptions: NO_RECONNECTION,
    });
  }

  stderrLines(): string[] {
    return [];
  }

  /** Ends the session on the server (given a grace on the clock), then closes the transport. */
  async stop(closed: Promise<void>): Promise<void> {
    let timer: { cancel(): void } | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = deadlineAt(this.#clock, this.#clock.now() + MCP_SUPERVISION.kill_grace_ms, resolve);
    });
    await Promise.race([this.transport.terminateSession().catch(() => {}), graceOver]);
    timer?.cancel();
    await this.transport.close();
    await closed;
  }
}
