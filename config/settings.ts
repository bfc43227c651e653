import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { homeId } from '../core/endpoint/home-identity.js';
import { defaultSocketPath } from '../core/endpoint/socket-path.js';
import { readDaemonRecord } from './daemon-record.js';

/** The model provider the daemon starts with, from its flags and environment. */
export interface ProviderSettings {
  /** Base URL of an OpenAI-compatible Chat Completions API, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string | null;
  /** The model turns use when no setting selects one. */
  model: string | null;
  /** Read from the environment, where it wins over a stored key; never logged, echoed or stored. */
  apiKey: string | null;
  /**
   * The environment the daemon started with, from which each named provider's key variable is read once;
   * absent: none is set.
   */
  environment?: Readonly<Record<string, string | undefined>>;
}

/** Where `run_command` finds `bwrap`, the user whose home it hides, and the places it empties. */
export interface ToolEnvironment {
  /** A PATH string. */
  searchPath: string;
  userHome: string;
  /** `XDG_RUNTIME_DIR`, or null. */
  runtimeDirectory: string | null;
  /** Where the daemon listens, or null (stdio). */
  socketPath: string | null;
}

/** The environment variable the provider's API key is read from (never from the command line). */
export const API_KEY_VARIABLE = 'MAGI_API_KEY';

export interface ServeFlags {
  socket?: string;
  home?: string;
  idleTimeoutMs?: number;
  providerBaseUrl?: string;
  model?: string;
  debugHttp?: boolean;
  logLevel?: string;
}

export interface ServeSettings {
  home: string;
  socket: string;
  idleTimeoutMs: number;
  provider: ProviderSettings;
  debugHttp: boolean;
  logLevel: string;
  /** Where `run_command` finds `bwrap` (PATH), the user's home it hides, and the places it empties. */
  toolEnvironment: ToolEnvironment;
}

/** The embedded defaults, overridden by flags; the only place the environment is read. */
export function serveSettings(flags: ServeFlags, env: NodeJS.ProcessEnv = process.env): ServeSettings {
  const home = resolve(flags.home ?? resolve(homedir(), '.magi'));
  const socket = resolve(flags.socket ?? defaultSocketPath(home, env));
  return {
    home,
    socket,
    idleTimeoutMs: flags.idleTimeoutMs ?? 0,
    provider: {
      baseUrl: flags.providerBaseUrl ?? null,
      model: flags.model ?? null,
      apiKey: env[API_KEY_VARIABLE] || null,
      // A copy, taken once: named providers read the variables they name from it.
      environment: { ...env },
    },
    debugHttp: flags.debugHttp ?? false,
    logLevel: flags.logLevel ?? 'info',
    toolEnvironment: {
      searchPath: env.PATH ?? '',
      userHome: homedir(),
      runtimeDirectory: env.XDG_RUNTIME_DIR || null,
      socketPath: socket,
    },
  };
}

export type StdioFlags = Pick<ServeFlags, 'home' | 'providerBaseUrl' | 'model' | 'logLevel'>;

export type StdioSettings = Pick<ServeSettings, 'home' | 'provider' | 'logLevel' | 'toolEnvironment'>;

/** `magid stdio` takes the home, provider and log level exactly as `serve` does. */
export function stdioSettings(flags: StdioFlags, env: NodeJS.ProcessEnv = process.env): StdioSettings {
  const { home, provider, logLevel, toolEnvironment } = serveSettings(flags, env);
  return { home, provider, logLevel, toolEnvironment: { ...toolEnvironment, socketPath: null } };
}

/** How `magid status`, `magid stop` and the client library name the daemon they want. */
export interface DaemonTarget {
  socket: string;
  /** The home's id the daemon there must report, or null when only a socket was named. */
  homeId: string | null;
}

/**
 * Where a home's daemon is found: the socket named, else the one its running daemon recorded in
 * `<home>/run/daemon.json`, else the home's default socket. Whoever answers there must serve that home
 * unless only a socket was named.
 */
export async function daemonTarget(
  flags: { socket?: string; home?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<DaemonTarget> {
  const { home, socket } = serveSettings(flags, env);
  const expected = flags.socket === undefined || flags.home !== undefined ? homeId(home) : null;
  if (flags.socket !== undefined) return { socket, homeId: expected };
  return { socket: (await readDaemonRecord(home))?.socket ?? socket, homeId: expected };
}
