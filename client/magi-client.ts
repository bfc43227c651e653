import { daemonTarget, serveSettings } from '../config/settings.js';
import { ApplicationExecutor, type ToolHandler } from './executor.js';
import { type LaunchedDaemon, type LaunchOptions, launchDaemon } from './launch.js';
import { Session } from './session.js';
import { operationId, typedCall } from './typed-call.js';
import { connectSocket, WireCallError, type WireClient } from './wire-client.js';
import type { InitializeResult, SessionClaimResult, SessionCreateResult } from './wire-types.js';

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

/** The socket errors that mean no daemon is listening (as opposed to one that refuses or is slow). */
const NOT_LISTENING = new Set(['ENOENT', 'ECONNREFUSED']);

/**
 * One initialized connection to the daemon, with the `application_resources_v1` profile. It checks
 * that the daemon runs as this user before sending a byte, and can launch the daemon when none runs.
 */
export class MagiClient {
  readonly wire: WireClient;
  readonly initialized: InitializeResult;
  /** The daemon this client launched, if it did. */
  readonly launched: LaunchedDaemon | null;
  readonly #reconnect: () => Promise<WireClient>;

  private constructor(
    wire: WireClient,
    initialized: InitializeResult,
    launched: LaunchedDaemon | null,
    reconnect: () => Promise<WireClient>,
  ) {
    this.wire = wire;
    this.initialized = initialized;
    this.launched = launched;
    this.#reconnect = reconnect;
  }

  static async connect(options: ConnectOptions = {}): Promise<MagiClient> {
    // Found as `magid status` finds it: the socket named, else the one the home's running daemon
    // recorded, else the home's default; whoever answers must serve that home.
    const { home } = serveSettings({ home: options.home });
    const { socket, homeId } = await daemonTarget({ home: options.home, socket: options.socket });
    const info = options.client ?? { name: 'magi-client', version: '1' };
    const open = async () =>
      initialize((await connectSocket(socket, { keepHistory: false })).client, info, homeId);
    try {
      const [wire, initialized] = await open();
      return new MagiClient(wire, initialized, null, async () => (await open())[0]);
    } catch (error) {
      if (!options.launch || !NOT_LISTENING.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
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

  /** Makes this connection the session's controller (taking over from any other). */
  async claimSession(sessionId: string): Promise<Session> {
    const claim = await typedCall<SessionClaimResult>(
      this.wire,
      'session.claim',
      {},
      { session: sessionId, operation: operationId() },
    );
    return new Session(this.wire, sessionId, claim);
  }

  /**
   * An executor attached to this connection, running `handlers`. After a drop it reconnects on its
   * own connections; this client's connection is not reopened.
   */
  startExecutor(handlers: Record<string, ToolHandler>, options: { retryDelayMs?: number } = {}) {
    return ApplicationExecutor.create(this.wire, { handlers, reconnect: this.#reconnect, ...options });
  }

  close(): void {
    this.wire.close();
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
      throw new WireCallError('initialize', 'unsupported_capability');
    }
    if (homeId !== null && initialized.home_id !== homeId)
      throw new WireCallError('initialize', 'another_home');
    return [wire, initialized];
  } catch (error) {
    wire.close();
    throw error;
  }
}
