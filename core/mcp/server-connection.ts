import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, PaginatedResultSchema, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../clock.js';
import { HttpLink } from './http-link.js';
import type { McpClientInfo, McpServerConfig } from './mcp-types.js';
import type { ServerLink } from './server-link.js';
import { errnoCode, type Loss } from './server-loss.js';
import { ServerText } from './server-text.js';
import { StdioLink } from './stdio-link.js';

/**
 * Deadlines are the caller's, on its clock; the SDK's own timer (real time, per request) is set past
 * any of them. Node's timers take at most this many milliseconds.
 */
const SDK_TIMEOUT_MS = 2_147_483_647;

export interface ListedPage {
  /** The tools as the server sent them, each to be checked before use. */
  tools: readonly unknown[];
  nextCursor: string | undefined;
}

/** One connection to one MCP server through the SDK's client, from its start to its close. */
export class ServerConnection {
  readonly type: McpServerConfig['type'];
  readonly #link: ServerLink;
  readonly #text: ServerText;
  readonly #client: Client;
  readonly #closed: Promise<void>;
  #hasClosed = false;
  #stopped: Promise<void> | undefined;

  /** A stdio child starts in `cwd`. */
  constructor(config: McpServerConfig, cwd: string, clock: Clock, client: McpClientInfo) {
    this.type = config.type;
    this.#text = new ServerText(config);
    this.#link =
      config.type === 'stdio' ? new StdioLink(config, cwd, clock, this.#text) : new HttpLink(config, clock);
    this.#client = new Client({ name: client.name, version: client.version }, { capabilities: {} });
    // A line that is not a message, a broken pipe: nothing a server does is logged, and a connection
    // that is lost shows as its close.
    this.#client.onerror = () => {};
    this.#closed = new Promise((resolve) => {
      // Called once the transport has closed (for a child: it exited and its pipes closed), before any
      // pending request fails.
      this.#client.onclose = () => {
        this.#hasClosed = true;
        resolve();
      };
    });
  }

  /** Settles once the connection is closed: the child gone (or never spawned), the HTTP transport closed. */
  get closed(): Promise<void> {
    return this.#closed;
  }

  get hasClosed(): boolean {
    return this.#hasClosed;
  }

  /** Starts the link (spawns the child) and runs `initialize`. */
  connect(signal: AbortSignal): Promise<void> {
    return this.#client.connect(this.#link.transport, { signal, timeout: SDK_TIMEOUT_MS });
  }

  /** Whether the server said at `initialize` that it has tools; one without them is not asked for a list. */
  get offersTools(): boolean {
    return this.#client.getServerCapabilities()?.tools !== undefined;
  }

  /** One page of `tools/list`; the tools are not checked here, so one bad tool cannot spoil the page. */
  async listTools(cursor: string | undefined, signal: AbortSignal): Promise<ListedPage> {
    const page = await this.#client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      PaginatedResultSchema,
      { signal, timeout: SDK_TIMEOUT_MS },
    );
    const tools = (page as { tools?: unknown }).tools;
    return { tools: Array.isArray(tools) ? tools : [], nextCursor: page.nextCursor };
  }

  /** `tools/call`; the result is returned unchecked, for the caller to tell a malformed one apart. */
  callTool(tool: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<unknown> {
    return this.#client.request(
      { method: 'tools/call', params: { name: tool, arguments: { ...args } } },
      ResultSchema,
      { signal, timeout: SDK_TIMEOUT_MS },
    );
  }

  /** The last lines the server wrote on stderr, secrets replaced, for the log. */
  stderrLines(): string[] {
    return this.#link.stderrLines();
  }

  /** What the server wrote, fit to be shown: one line, secrets replaced, at most `maxBytes` (`ServerText.line`). */
  shown(text: string, maxBytes: number): string {
    return this.#text.line(text, maxBytes);
  }

  /** Why the start failed with `error`; `timedOut` when its deadline aborted it. */
  startLoss(error: unknown, timedOut: boolean): Loss {
    if (!this.#link.opened) return withDetail('spawn_failed', errnoCode(error));
    if (this.type === 'stdio' && this.#hasClosed) return { reason: 'exited' };
    if (timedOut) return { reason: 'start_timeout' };
    if (error instanceof StreamableHTTPError && error.code !== undefined) {
      return { reason: 'start_failed', detail: `HTTP ${error.code}` };
    }
    if (this.type === 'http' && !(error instanceof McpError)) {
      return withDetail('unreachable', errnoCode(error));
    }
    return { reason: 'start_failed' };
  }

  /** Why a connection that was serving was lost. */
  loss(): Loss {
    return this.type === 'stdio' && this.#hasClosed ? { reason: 'exited' } : { reason: 'connection_lost' };
  }

  /** Ends the connection (for a child: SIGTERM, then SIGKILL after the grace); settles once it is gone. */
  stop(): Promise<void> {
    this.#stopped ??= this.#link.stop(this.#closed, () => this.#hasClosed);
    return this.#stopped;
  }
}

function withDetail(reason: Loss['reason'], detail: string | undefined): Loss {
  return detail === undefined ? { reason } : { reason, detail };
}
