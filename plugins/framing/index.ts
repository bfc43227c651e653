import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { CapabilityCatalog } from '../../core/capabilities/describe.js';
import { Connection } from '../../core/connections/connection.js';
import { type FrameSink, Outbound } from '../../core/connections/outbound.js';
import { ERROR_MESSAGES, type ErrorCode } from '../../core/errors.js';
import { SERVICE_LIMITS, WIRE_LIMITS } from '../../core/limits.js';
import { checkEnvelope, decodeLine, envelopeFits, type RequestEnvelope } from '../../core/wire/envelope.js';
import { encodeError, encodeResult, encodeSerializedError } from '../../core/wire/frames.js';
import { LineSplitter } from '../../core/wire/line-splitter.js';
import type { WireRouteOptions } from '../../routes/wire-route.js';
import { FrameRequest, FrameResponse } from './frame-exchange.js';

/** A connection driven without a socket: the in-process half of the test client uses it. */
export interface FrameChannel {
  connection: Connection;
  receive(bytes: Buffer | string): void;
  close(): void;
}

/** The byte streams one connection is served over. */
export interface Transport {
  /** The client's request bytes. */
  input: Readable;
  /**
   * Where the connection's frames go: the same stream as `input` for a socket. The connection lives as
   * long as its output; an input that ends alone (stdin at EOF) is its owner's to handle.
   */
  output: Writable;
  /** Whether `application_resources_v1` may be negotiated on it: on the Unix socket, not on stdio. */
  offersProfile: boolean;
}

export interface Framing {
  /** Serves NDJSON on an accepted socket whose peer was already checked. */
  accept(socket: Socket): Connection;
  /** Serves NDJSON over any transport (stdin and stdout for `magid stdio`) through the same pipeline. */
  serve(transport: Transport): Connection;
  /** Opens a connection whose frames go to `sink` and whose bytes the caller feeds. */
  open(sink: FrameSink): FrameChannel;
  readonly connections: ReadonlySet<Connection>;
  /** Requests routed and not yet answered, across all connections. */
  readonly inFlight: number;
  /** Settles once no request is in flight (at once when none is). */
  settled(): Promise<void>;
  /** Wire methods by name, as their routes declared them. */
  readonly methods: ReadonlyMap<string, WireRouteOptions>;
  /** Events by name, with whether only profile connections receive them. */
  readonly events: ReadonlyMap<string, { profile: boolean }>;
  /** Declares an event a plugin emits, so capabilities can list it. */
  declareEvent(name: string, options?: { profile?: boolean }): void;
  /** Calls `listener` whenever the number of connections changes. */
  onConnectionsChanged(listener: () => void): void;
  /**
   * Calls `listener` once when the daemon starts draining, before it waits for the requests in flight:
   * work that could keep a request waiting on the outside world answers it now.
   */
  onDraining(listener: () => void): void;
  /**
   * Starts draining now, before the app closes (once only; closing the app drains too): new requests are
   * refused with `shutting_down` and the `onDraining` listeners run. `magid stdio` calls it when its one
   * client has gone, so nothing read before keeps waiting on the outside world for nobody.
   */
  drain(): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    framing: Framing;
    instanceId: string;
    capabilityCatalog: CapabilityCatalog;
  }
}

const BOUNDS = {
  softBytes: SERVICE_LIMITS.outbound_soft_bytes,
  hardBytes: SERVICE_LIMITS.outbound_hard_bytes,
};

/**
 * NDJSON framing: splits each connection's bytes into lines, checks each as a wire v2 envelope and
 * routes it through Fastify as a call of the route named after its method. Everything the wire
 * decides before a method runs (frame and payload limits, malformed envelopes, duplicate ids,
 * initialization, the method's null/set members) is decided here, once, for every method.
 */
const framing: FastifyPluginAsync = async (fastify) => {
  const methods = new Map<string, WireRouteOptions>();
  const events = new Map<string, { profile: boolean }>();
  const connections = new Set<Connection>();
  const connectionListeners: Array<() => void> = [];
  /** Per socket connection: resumes reading once it is no longer held back. */
  const answered = new WeakMap<Connection, () => void>();
  let inFlight = 0;
  let draining = false;
  const settledWaiters: Array<() => void> = [];

  function settled(): Promise<void> {
    if (inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => settledWaiters.push(resolve));
  }

  fastify.addHook('onRoute', (route) => {
    const wire = route.config?.wire;
    if (wire) methods.set(route.url.slice(1), wire);
  });

  fastify.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw as unknown as FrameRequest;
    if (!(raw instanceof FrameRequest)) {
      // Plain HTTP reaches only routes that are not wire methods (the debug inspection).
      if (request.routeOptions.config.wire) reply.code(404).send({ error: 'not found' });
      else done();
      return;
    }
    request.body = raw.envelope.payload;
    request.wire = {
      connection: raw.connection,
      envelope: raw.envelope,
      grant: null,
      operationReserved: false,
      retained: null,
    };
    done();
  });
  fastify.decorateRequest('wire', null as never);

  function connectionsChanged(): void {
    for (const listener of connectionListeners) listener();
  }

  function register(connection: Connection): void {
    connections.add(connection);
    connection.onClose(() => {
      connections.delete(connection);
      connectionsChanged();
    });
    connectionsChanged();
  }

  function reply(connection: Connection, id: string | null, code: ErrorCode): void {
    connection.send(encodeError(id, fastify.instanceId, code, ERROR_MESSAGES[code]));
  }

  type Admission = { refused: ErrorCode; id: string | null } | { refused: null; envelope: RequestEnvelope };

  function handleLine(connection: Connection, line: Buffer | null): void {
    const admission = admit(connection, line);
    if (admission.refused === null) dispatch(connection, admission.envelope);
    else reply(connection, admission.id, admission.refused);
  }

  /** Everything the wire decides about a line before its method runs, in the order wire-v2 gives. */
  function admit(connection: Connection, line: Buffer | null): Admission {
    if (line === null) return { refused: 'limit_exceeded', id: null };
    const decoded = decodeLine(line);
    if (decoded.kind === 'invalid') return { refused: 'invalid_request', id: null };
    const { safeId } = decoded;
    if (safeId !== null && connection.inFlight.has(safeId))
      return { refused: 'duplicate_request_id', id: safeId };
    if (decoded.kind === 'too_deep') return { refused: 'invalid_request', id: safeId };
    const envelope = checkEnvelope(decoded.value);
    if (typeof envelope === 'string') return { refused: envelope, id: safeId };
    const { id, method } = envelope;
    if (draining) return { refused: 'shutting_down', id };
    const options = methods.get(method);
    if (!connection.initialized && method !== 'initialize') {
      return { refused: options ? 'not_initialized' : 'unknown_method', id };
    }
    if (!options || (options.profile && !connection.profileSelected))
      return { refused: 'unknown_method', id };
    if (!envelopeFits(envelope, options)) return { refused: 'invalid_request', id };
    return { refused: null, envelope };
  }

  function dispatch(connection: Connection, envelope: RequestEnvelope): void {
    connection.inFlight.add(envelope.id);
    inFlight++;
    const response = new FrameResponse((statusCode, body) => {
      connection.inFlight.delete(envelope.id);
      inFlight--;
      connection.send(encodeResponse(envelope.id, statusCode, body));
      answered.get(connection)?.();
      if (inFlight === 0) for (const resolve of settledWaiters.splice(0)) resolve();
    });
    fastify.routing(new FrameRequest(envelope, connection) as never, response as never);
  }

  function encodeResponse(id: string, statusCode: number, body: string): string {
    if (statusCode === 503)
      return encodeError(id, fastify.instanceId, 'shutting_down', ERROR_MESSAGES.shutting_down);
    if (Buffer.byteLength(body) > WIRE_LIMITS.payload_bytes) {
      fastify.log.error({ bytes: Buffer.byteLength(body) }, 'a response exceeded the payload limit');
      return encodeError(id, fastify.instanceId, 'internal_error', ERROR_MESSAGES.internal_error);
    }
    if (statusCode < 400) return encodeResult(id, fastify.instanceId, body);
    return encodeSerializedError(id, fastify.instanceId, body);
  }

  function feed(connection: Connection, splitter: LineSplitter, bytes: Buffer): void {
    for (const line of splitter.push(bytes)) {
      // A request read after its connection closed would run with nobody to answer.
      if (connection.closed) return;
      handleLine(connection, line.kind === 'line' ? line.bytes : null);
    }
  }

  const serve = ({ input, output, offersProfile }: Transport): Connection => {
    const outbound = new Outbound(output, BOUNDS);
    const connection = new Connection(outbound, { offersProfile });
    const splitter = new LineSplitter(WIRE_LIMITS.frame_bytes);
    const readPaused = () =>
      outbound.congested || connection.inFlight.size >= SERVICE_LIMITS.in_flight_per_connection;
    const resumeIfPossible = () => {
      if (input.isPaused() && !readPaused()) input.resume();
    };
    outbound.onCongestion = (congested) => (congested ? input.pause() : resumeIfPossible());
    input.on('data', (bytes: Buffer) => {
      feed(connection, splitter, bytes);
      if (readPaused()) input.pause();
    });
    output.on('drain', () => {
      outbound.drained();
      resumeIfPossible();
    });
    input.on('error', () => {});
    // A failed output takes no further frame: process.stdout even outlives its own destroy.
    output.on('error', () => connection.markClosed());
    output.on('close', () => connection.markClosed());
    // Ending flushes what is queued (the answers of a drain) before the streams go.
    connection.onClose(() =>
      output.end(() => {
        output.destroy();
        input.destroy();
      }),
    );
    answered.set(connection, resumeIfPossible);
    register(connection);
    input.resume();
    return connection;
  };

  const accept = (socket: Socket): Connection =>
    serve({ input: socket, output: socket, offersProfile: true });

  const open = (sink: FrameSink): FrameChannel => {
    const connection = new Connection(new Outbound(sink, BOUNDS));
    const splitter = new LineSplitter(WIRE_LIMITS.frame_bytes);
    register(connection);
    return {
      connection,
      receive: (bytes) => feed(connection, splitter, typeof bytes === 'string' ? Buffer.from(bytes) : bytes),
      close: () => connection.markClosed(),
    };
  };

  fastify.decorate('capabilityCatalog', new CapabilityCatalog({ methods, events }));
  fastify.decorate('framing', {
    accept,
    serve,
    open,
    connections,
    get inFlight() {
      return inFlight;
    },
    settled,
    methods,
    events,
    declareEvent: (name: string, eventOptions?: { profile?: boolean }) => {
      events.set(name, { profile: eventOptions?.profile === true });
    },
    onConnectionsChanged: (listener: () => void) => {
      connectionListeners.push(listener);
    },
    onDraining: (listener: () => void) => {
      drainingListeners.push(listener);
    },
    drain,
  } satisfies Framing);

  const drainingListeners: Array<() => void> = [];
  function drain(): void {
    if (draining) return;
    draining = true;
    for (const listener of drainingListeners) listener();
  }

  // Drain: new requests are refused with shutting_down, requests in flight are answered, then every
  // connection is ended so that the listener can close.
  fastify.addHook('preClose', async () => {
    drain();
    await settled();
    for (const connection of connections) connection.markClosed();
  });
};

export default fp(framing, { name: 'framing', fastify: '5.x' });
