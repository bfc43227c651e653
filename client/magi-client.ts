import { EventEmitter } from 'node:events';
import { daemonTarget, serveSettings } from '../config/settings.js';
import type { Clock } from '../core/clock.js';
import { type DefinedTool, toolHandlers } from './define-tool.js';
import { ApplicationExecutor } from './executor.js';
import type { ExecutorStore } from './executor-store.js';
import type { ExecutorOptions, ToolHandler } from './executor-types.js';
import { type LaunchedDaemon, type LaunchOptions, launchDaemon } from './launch.js';
import { isNotListening, meansNoDaemon, NoDaemonError } from './no-daemon-error.js';
import { Session } from './session.js';
import { reportTurns, type TurnReport } from './turn-history.js';
import { operationId, typedCall } from './typed-call.js';
import { connectSocket, WireCallError, type WireClient } from './wire-client.js';
import type { InitializeResult, PendingCall, SessionCreateResult } from './wire-types.js';

export const PROFILE = 'application_resources_v1';

export interface ConnectOptions {
  /** The daemon home (default `~/.magi`): where a launched daemon keeps its state. */
  home?: string;
  /**
   * The socket (default: where the home's running daemon recorded it listens, else the daemon's own default
   * for that home). A daemon found there that serves another home is refused (`another_home`).
   */
  socket?: string;
  /** Start `magid serve` on that home and socket when no daemon answers there. */
  launch?: boolean;
  /** More `magid serve` flags for a launched daemon. */
  serveArgs?: LaunchOptions['serveArgs'];
  /** How this application names itself in `initialize`. */
  client?: { name: string; version: string };
}

/** An executor's handlers: by tool name, or the tools `defineTool` made. */
export type Handlers = Record<string, ToolHandler> | readonly DefinedTool[];

/** Options of an executor the client starts or resumes. */
export interface ClientExecutorOptions {
  /** Wait between attempts to reconnect or to reconcile an outcome still in progress. */
  retryDelayMs?: number;
  /** The time retry waits are read from (default: Node's timers). */
  clock?: Clock;
  /** Keeps the executor across a restart of the application (`fileStore(path)`, or your own). */
  store?: ExecutorStore;
}

/** What `resumeExecutor` found: the executor resumed (or gone), the sessions claimed, the kept turns. */
export interface ResumedExecutor {
  /**
   * The executor, resumed; null when it is gone (the daemon restarted, or it was released or expired): the
   * store was cleared, and `startExecutor` makes a new one.
   */
  executor: ApplicationExecutor | null;
  /** The calls that were open when it resumed (docs/protocol.md section 6); none when it is gone. */
  pending: readonly PendingCall[];
  /** Each session of a pending call, claimed by this client before any result was submitted. */
  sessions: ReadonlyMap<string, Session>;
  /**
   * The turns started with the executor that the store kept, oldest first, each with its terminal from its
   * session's durable history (null while it runs), read before anything was resumed or cleared.
   */
  turns: readonly TurnReport[];
}

/** The events a client emits. */
export interface ClientEvents {
  /** The client's connection closed without `close()`: connect again to go on. */
  connection_lost: [];
  /** After the connection was lost, no daemon listens on the socket any more. */
  daemon_stopped: [];
}

/**
 * One initialized connection to the daemon, with the `application_resources_v1` profile. It checks
 * that the daemon runs as this user before sending a byte, and can launch the daemon when none runs.
 */
export class MagiClient extends EventEmitter<ClientEvents> {
  readonly wire: WireClient;
  readonly initialized: InitializeResult;
  /** The daemon this client launched, if it did. */
  readonly launched: LaunchedDaemon | null;
  readonly #reconnect: () => Promise<WireClient>;
  #closing = false;

  private constructor(
    wire: WireClient,
    initialized: InitializeResult,
    launched: LaunchedDaemon | null,
    reconnect: () => Promise<WireClient>,
  ) {
    super();
    this.wire = wire;
    this.initialized = initialized;
    this.launched = launched;
    this.#reconnect = reconnect;
    wire.onClose(() => {
      if (this.#closing) return;
      this.emit('connection_lost');
      if (this.listenerCount('daemon_stopped') === 0) return;
      // One attempt tells a daemon that stopped from a connection that dropped.
      reconnect().then(
        (probe) => probe.close(),
        (error: unknown) => {
          if (meansNoDaemon(error)) this.emit('daemon_stopped');
        },
      );
    });
  }

  static async connect(options: ConnectOptions = {}): Promise<MagiClient> {
    // Found as `magid status` finds it: the socket named, else the one the home's running daemon
    // recorded, else the home's default; whoever answers must serve that home.
    const { home } = serveSettings({ home: options.home });
    const { socket, homeId } = await daemonTarget({ home: options.home, socket: options.socket });
    const info = options.client ?? { name: 'magi-client', version: '1' };
    const open = async () => {
      let connection: Awaited<ReturnType<typeof connectSocket>>;
      try {
        connection = await connectSocket(socket, { keepHistory: false });
      } catch (error) {
        throw isNotListening(error) ? new NoDaemonError(socket) : error;
      }
      return initialize(connection.client, info, homeId);
    };
    try {
      const [wire, initialized] = await open();
      return new MagiClient(wire, initialized, null, async () => (await open())[0]);
    } catch (error) {
      if (!options.launch || !(error instanceof NoDaemonError)) throw error;
    }
    const launched = await launchDaemon({ home, socket, serveArgs: options.serveArgs ?? [] });
    const [wire, initialized] = await open();
    return new MagiClient(wire, initialized, launched, async () => (await open())[0]);
  }

  /** A client over connections `open` makes (each a fresh, uninitialized connection). */
  static async over(
    open: () => Promise<WireClient>,
    info = { name: 'magi-client', version: '1' },
  ): Promise<MagiClient> {
    const reconnect = async () => (await initialize(await open(), info))[0];
    const [wire, initialized] = await initialize(await open(), info);
    return new MagiClient(wire, initialized, null, reconnect);
  }

  /** Creates a session over `workspace` (an absolute directory) and claims it. */
  async createSession(workspace: string, title: string | null = null): Promise<Session> {
    const created = await typedCall<SessionCreateResult>(
      this.wire,
      'session.create',
      { workspace, title },
      { operation: operationId() },
    );
    return this.claimSession(created.session_id);
  }

  /**
   * Makes this connection the session's controller (taking over from any other). A terminal that reaches
   * the connection before the claim's answer is kept for `session.terminal`.
   */
  claimSession(sessionId: string): Promise<Session> {
    return Session.claim(this.wire, sessionId);
  }

  /**
   * An executor attached to this connection, running `handlers`. After a drop it reconnects on its
   * own connections; this client's connection is not reopened. With a `store`, it is kept there for
   * `resumeExecutor` after a restart of the application.
   */
  startExecutor(handlers: Handlers, options: ClientExecutorOptions = {}): Promise<ApplicationExecutor> {
    return ApplicationExecutor.create(this.wire, this.#executorOptions(handlers, options));
  }

  /**
   * After a restart of the application: reads what became of the turns `options.store` kept from their
   * sessions' durable history, then resumes the executor it kept, on this connection, in the order of
   * docs/protocol.md section 6 (resume, rotate the secret, claim the sessions of its open calls, then
   * submit the results it kept). A call whose handler was running when the application stopped goes to
   * `onInterrupted` (by default it is answered with a fixed error and not run again). When the executor is
   * gone (another daemon instance, released, expired), the store is cleared and `executor` is null:
   * `startExecutor` makes a new one. Null when the store keeps nothing.
   */
  async resumeExecutor(
    handlers: Handlers,
    options: ClientExecutorOptions & {
      store: ExecutorStore;
      onInterrupted?: ExecutorOptions['onInterrupted'];
    },
  ): Promise<ResumedExecutor | null> {
    const record = await options.store.load();
    if (record === null) return null;
    // Read before anything clears the store: the history is all that survives a restart of the daemon.
    const turns = await reportTurns(this.wire, record.turns);
    const gone = { executor: null, pending: [], sessions: new Map(), turns };
    if (record.instance_id !== this.initialized.instance_id) {
      // Executors do not survive a restart of the daemon; the secret is never shown to another one.
      await options.store.save(null);
      return gone;
    }
    const resumed = await ApplicationExecutor.resume(this.wire, record, {
      ...this.#executorOptions(handlers, options),
      onInterrupted: options.onInterrupted,
    });
    if (resumed === null) return gone;
    const { executor, pending } = resumed;
    const sessions = new Map<string, Session>();
    for (const sessionId of new Set(pending.map((call) => call.session_id))) {
      sessions.set(sessionId, await this.claimSession(sessionId));
    }
    await executor.deliverRecovered(pending);
    return { executor, pending, sessions, turns };
  }

  close(): void {
    this.#closing = true;
    this.wire.close();
  }

  #executorOptions(handlers: Handlers, options: ClientExecutorOptions): ExecutorOptions {
    return {
      handlers: Array.isArray(handlers) ? toolHandlers(handlers) : (handlers as Record<string, ToolHandler>),
      reconnect: this.#reconnect,
      instanceId: this.initialized.instance_id,
      ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.store === undefined ? {} : { store: options.store }),
    };
  }
}

async function initialize(
  wire: WireClient,
  info: { name: string; version: string },
  homeId: string | null = null,
): Promise<[WireClient, InitializeResult]> {
  try {
    const initialized = await typedCall<InitializeResult>(wire, 'initialize', {
      wire: 2,
      client: info,
      requested_capabilities: [PROFILE],
    });
    if (!initialized.negotiated_capabilities.includes(PROFILE)) {
      throw new WireCallError('initialize', 'unsupported_capability', `the daemon does not offer ${PROFILE}`);
    }
    if (homeId !== null && initialized.home_id !== homeId)
      throw new WireCallError('initialize', 'another_home', 'the daemon at this socket serves another home');
    return [wire, initialized];
  } catch (error) {
    wire.close();
    throw error;
  }
}
