import { createServer as createHttpServer } from 'node:http';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  LogController,
} from 'fastify';
import { catalogOf } from '../config/catalog.js';
import { loadConfigFile } from '../config/config-file.js';
import { removeStaleHomeTemporaries } from '../config/home-files.js';
import type { ProviderSettings, ToolEnvironment } from '../config/settings.js';
import { discoverSkills } from '../config/skills.js';
import { CaptureThread } from '../core/capture/capture-thread.js';
import type { WorkspaceReader } from '../core/capture/workspace-reader.js';
import { type Clock, systemClock } from '../core/clock.js';
import { HiddenPlaces } from '../core/confinement/hidden-places.js';
import { createListener, type Listener } from '../core/connections/listener.js';
import {
  type ConnectionCapacity,
  connectionCapacity,
  openFilesLimit,
} from '../core/endpoint/descriptor-limit.js';
import { homeId } from '../core/endpoint/home-identity.js';
import { ERROR_MESSAGES, isWireError, WireError } from '../core/errors.js';
import { isDiskFull } from '../core/history/history-unavailable.js';
import { newId } from '../core/ids.js';
import { SERVICE_LIMITS } from '../core/limits.js';
import type { OperationBounds } from '../core/operations/operation-ledger.js';
import type { NameCatalog } from '../core/resources/names.js';
import agent from './agent.js';
import auth from './auth.js';
import capture from './capture.js';
import configuration from './configuration.js';
import control from './control.js';
import debugHttp from './debug-http.js';
import evidence from './evidence.js';
import executor from './executor.js';
import framing from './framing/index.js';
import history from './history.js';
import idleStop from './idle-stop.js';
import operations from './operations.js';
import provider, { type ProviderTuning } from './provider.js';
import registry from './registry.js';
import titles from './titles.js';
import turns from './turns.js';
import { WIRE_ROUTES } from './wire-routes.js';

export interface AppOptions {
  /** The daemon's home; its durable state lives in `<home>/state`. */
  home: string;
  clock?: Clock;
  provider?: ProviderSettings;
  /** Adjusts the provider adapter (tests shorten its bounds and watch its retries). */
  providerTuning?: ProviderTuning;
  logger?: FastifyBaseLogger;
  debugHttp?: boolean;
  /** 0 (the default) disables the idle stop. */
  idleTimeoutMs?: number;
  /** Called when the idle stop decides to stop; the caller closes the app. */
  onIdle?: () => void;
  /** Reserved resource names; by default read once from the home's config file and skills folder. */
  catalog?: NameCatalog;
  /** Reads workspace files for registrations; by default the daemon's capture worker thread. */
  workspaceReader?: WorkspaceReader;
  /** Where `run_command` finds `bwrap` and whose credential folders it hides; by default the system PATH and the user's home. */
  toolEnvironment?: ToolEnvironment;
  /** Bounds of the operation table; by default those of core/limits.ts (tests shrink them). */
  operationBounds?: OperationBounds;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The daemon's home, as given at start. */
    home: string;
    /** What `initialize` and `status` say of the home: a hash of its real path. */
    homeId: string;
    listener: Listener;
    /** How many connections the daemon serves at once, and the open-files limit that decided it. */
    connectionCapacity: ConnectionCapacity;
  }
}

const NO_PROVIDER: ProviderSettings = { baseUrl: null, model: null, apiKey: null };
const DEFAULT_TOOL_ENVIRONMENT: ToolEnvironment = {
  searchPath: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  userHome: homedir(),
  runtimeDirectory: null,
  socketPath: null,
};

/**
 * Builds the daemon: one Fastify instance whose server is the Unix-socket listener, with the
 * framing plugin in front of one route per wire method. Nothing listens until the caller says so.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const clock = options.clock ?? systemClock;
  // The config file is read once: the name catalog and the provider both take their sections from it.
  const config = loadConfigFile(options.home);
  const skillDiscovery = discoverSkills(options.home);
  const skillNames = skillDiscovery.skills.map((skill) => skill.name);
  const catalog = options.catalog ?? catalogOf(config, skillNames);
  const instanceId = newId('inst');
  const capacity = connectionCapacity(openFilesLimit());
  let listener: Listener | undefined;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // Frames are not HTTP requests: Fastify's per-request log lines would only repeat the wire.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    serverFactory: (handler) => {
      const http = options.debugHttp
        ? createHttpServer((request, response) => {
            // Only the read-only inspection routes are HTTP; the wire methods are reachable only as frames.
            if (request.method === 'GET' && request.url?.startsWith('/debug/'))
              return handler(request, response);
            response.writeHead(404, { 'content-type': 'application/json' });
            response.end('{"error":"not found"}');
          })
        : null;
      listener = createListener(
        {
          wire: (socket) => app.framing.accept(socket),
          ...(http ? { http: (socket) => http.emit('connection', socket) } : {}),
          refused: (reason) => app.log.warn({ reason }, 'connection refused'),
        },
        { maxConnections: capacity.connections, instanceId, clock },
      );
      return listener.server as never;
    },
  });
  app.decorate('instanceId', instanceId);
  app.decorate('home', options.home);
  app.decorate('homeId', homeId(options.home));
  app.decorate('listener', listener!);
  app.decorate('connectionCapacity', capacity);
  if (capacity.narrowed) {
    app.log.warn(
      {
        open_files_limit: capacity.openFilesLimit,
        open_files_wanted: capacity.openFilesWanted,
        connections_max: capacity.connections,
      },
      'the open files limit is too low to serve every connection the wire allows; serving fewer',
    );
  }
  const staleTemporaries = await removeStaleHomeTemporaries(options.home);
  if (staleTemporaries > 0) {
    app.log.info(
      { removed: staleTemporaries },
      'removed temporary files an interrupted write left in the home',
    );
  }
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isWireError(error)) return reply.code(error.statusCode).send(error.toJSON());
    if (error.validation) {
      return reply.code(400).send({ code: 'invalid_payload', message: ERROR_MESSAGES.invalid_payload });
    }
    // A write of the store's own connection (a session made, a claim's generation) met a full disk.
    if (isDiskFull(error)) return reply.code(400).send(new WireError('storage_full').toJSON());
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ code: 'internal_error', message: ERROR_MESSAGES.internal_error });
  });

  await app.register(framing);
  const providerSettings = options.provider ?? NO_PROVIDER;
  await app.register(configuration, {
    home: options.home,
    clock,
    defaultModel: providerSettings.model,
  });
  await app.register(auth, {
    home: options.home,
    clock,
    environmentKey: providerSettings.apiKey,
    oauth: config.provider.oauth,
    providers: config.provider_definitions,
    environment: providerSettings.environment ?? {},
  });
  await app.register(provider, {
    settings: providerSettings,
    config: config.provider,
    providers: config.provider_definitions,
    clock,
    tuning: options.providerTuning,
  });
  await app.register(history, { stateDir: join(options.home, 'state') });
  await app.register(operations, { clock, bounds: options.operationBounds });
  const environment = options.toolEnvironment ?? DEFAULT_TOOL_ENVIRONMENT;
  const hidden = await HiddenPlaces.resolve(environment.userHome);
  await app.register(control, { clock, hidden });
  await app.register(executor, { clock });
  await app.register(capture, {
    reader: options.workspaceReader ?? new CaptureThread(clock),
    drainMs: SERVICE_LIMITS.capture_drain_ms,
  });
  // Captures never reach the daemon's home (config, skills, state), nor its state if linked elsewhere.
  await app.register(registry, {
    clock,
    catalog,
    excludedDirectories: [options.home, join(options.home, 'state')],
  });
  await app.register(idleStop, {
    clock,
    idleTimeoutMs: options.idleTimeoutMs ?? 0,
    onIdle: () => {
      app.listener.refuseNew();
      options.onIdle?.();
    },
  });
  await app.register(evidence, { clock });
  await app.register(titles, { clock });
  await app.register(agent, {
    clock,
    home: options.home,
    tools: config.tools,
    mcpServers: config.mcp_servers,
    skills: { discovery: skillDiscovery, disabled: config.skills.disabled },
    environment,
    drainMs: SERVICE_LIMITS.capture_drain_ms,
  });
  await app.register(turns, { clock });
  for (const route of WIRE_ROUTES) await app.register(route);
  if (options.debugHttp) await app.register(debugHttp);
  return app;
}
