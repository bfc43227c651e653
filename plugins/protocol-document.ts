import Fastify from 'fastify';
import { APPLICATION_RESOURCES } from '../core/connections/connection.js';
import { ERROR_CODES } from '../core/errors.js';
import { WIRE_ID_PATTERN } from '../core/ids.js';
import type { MemberRule } from '../core/wire/envelope.js';
import { EVENTS, type EventEnvelope } from '../routes/event-schemas.js';
import type { WireRouteOptions } from '../routes/wire-route.js';
import { WIRE_ROUTES } from './wire-routes.js';

type JsonSchema = Record<string, unknown>;

/** A wire method as its route declares it: the envelope rules, the payload and the success result. */
export interface DeclaredMethod {
  name: string;
  wire: WireRouteOptions;
  payload: JsonSchema;
  result: JsonSchema;
}

/**
 * The wire methods as the routes declare them, read by registering each route on a bare Fastify instance
 * (no daemon behind it: the handlers never run) and keeping what each route hands to Fastify.
 */
export async function declaredMethods(): Promise<DeclaredMethod[]> {
  const app = Fastify({ logger: false });
  const methods: DeclaredMethod[] = [];
  app.addHook('onRoute', (route) => {
    const wire = route.config?.wire;
    if (!wire) return;
    const schema = route.schema as { body: unknown; response: Record<number, unknown> };
    methods.push({
      name: route.url.slice(1),
      wire,
      payload: plain(schema.body),
      result: plain(schema.response[200]),
    });
  });
  for (const route of WIRE_ROUTES) await app.register(route);
  await app.close();
  return methods.sort((a, b) => a.name.localeCompare(b.name));
}

/** A TypeBox schema as plain JSON Schema (TypeBox keeps its own markers out of the JSON). */
function plain(schema: unknown): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
const NULL = { type: 'null' };

function member(rule: MemberRule): JsonSchema {
  if (rule === 'required') return ref('wire_id');
  if (rule === 'null') return NULL;
  return { anyOf: [ref('wire_id'), NULL] };
}

function describeRules(wire: WireRouteOptions): string {
  const kind = wire.operation === 'required' ? 'a mutation' : 'a read';
  const profile = wire.profile ? `, on ${APPLICATION_RESOURCES} connections only` : '';
  return `${kind}: session_id ${wire.session}, control_token ${wire.control}, operation_id ${wire.operation}${profile}`;
}

function requestFrame(method: DeclaredMethod): JsonSchema {
  return {
    description: describeRules(method.wire),
    ...(method.wire.profile ? { 'x-profile': APPLICATION_RESOURCES } : {}),
    type: 'object',
    required: ['type', 'id', 'method', 'session_id', 'control_token', 'operation_id', 'payload'],
    additionalProperties: false,
    properties: {
      type: { const: 'request' },
      id: ref('wire_id'),
      method: { const: method.name },
      session_id: member(method.wire.session),
      control_token: member(method.wire.control),
      operation_id: member(method.wire.operation),
      payload: ref(`${method.name}.payload`),
    },
  };
}

function eventFrame(name: string, envelope: EventEnvelope, profile: boolean): JsonSchema {
  const sequence = { type: 'integer', minimum: 0 };
  const generation = { type: 'integer', minimum: 1 };
  return {
    ...(profile ? { 'x-profile': APPLICATION_RESOURCES } : {}),
    type: 'object',
    required: ['type', 'event', 'session_id', 'operation_id', 'grant_generation', 'sequence', 'payload'],
    additionalProperties: false,
    properties: {
      type: { const: 'event' },
      event: { const: name },
      session_id: envelope.session_id ? ref('wire_id') : NULL,
      operation_id: envelope.operation_id ? ref('wire_id') : NULL,
      grant_generation: envelope.grant_generation ? generation : NULL,
      sequence: envelope.sequence ? sequence : NULL,
      payload: ref(`${name}.payload`),
    },
  };
}

const RESPONSE = {
  description:
    "A response to a request. Its `result` is the result of the request's method (`<method>.result`).",
  type: 'object',
  oneOf: [
    {
      required: ['type', 'id', 'instance_id', 'ok', 'result'],
      additionalProperties: false,
      properties: {
        type: { const: 'response' },
        id: ref('wire_id'),
        instance_id: { type: 'string' },
        ok: { const: true },
        result: { type: 'object' },
      },
    },
    {
      required: ['type', 'id', 'instance_id', 'ok', 'error'],
      additionalProperties: false,
      properties: {
        type: { const: 'response' },
        id: { anyOf: [ref('wire_id'), NULL] },
        instance_id: { type: 'string' },
        ok: { const: false },
        error: ref('error'),
      },
    },
  ],
};

/**
 * The wire as one JSON Schema 2020-12 document (docs/protocol.schema.json, printed by `magid schema`): each
 * method's request frame (its envelope rules), payload and result, each event's frame and payload, the
 * response frames and every error code, one `$defs` entry each; the root accepts any frame of the wire.
 */
export async function protocolDocument(): Promise<JsonSchema> {
  const methods = await declaredMethods();
  const events = Object.entries(EVENTS).sort(([a], [b]) => a.localeCompare(b));
  const defs: Record<string, JsonSchema> = {
    wire_id: { type: 'string', pattern: WIRE_ID_PATTERN },
    error_code: { enum: [...ERROR_CODES] },
    error: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: { code: ref('error_code'), message: { type: 'string' } },
    },
    request: { oneOf: methods.map((method) => ref(`${method.name}.request`)) },
    response: RESPONSE,
    event: { oneOf: events.map(([name]) => ref(`${name}.event`)) },
  };
  for (const method of methods) {
    defs[`${method.name}.request`] = requestFrame(method);
    defs[`${method.name}.payload`] = method.payload;
    defs[`${method.name}.result`] = method.result;
  }
  for (const [name, event] of events) {
    defs[`${name}.event`] = eventFrame(name, event.envelope, event.profile);
    defs[`${name}.payload`] = plain(event.payload);
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://raw.githubusercontent.com/magi-daemon/magi-daemon/main/docs/protocol.schema.json',
    title: 'magid wire v2',
    description:
      'Every frame of the magid wire (docs/protocol.md). `<method>.request`, `<method>.payload` and `<method>.result` describe each method; `<event>.event` and `<event>.payload` each event; `response` and `error` the answers. `x-profile` marks what only application_resources_v1 connections see.',
    anyOf: [ref('request'), ref('response'), ref('event')],
    $defs: defs,
  };
}

/** The document as committed: two-space indentation and a final newline. */
export async function protocolDocumentText(): Promise<string> {
  return `${JSON.stringify(await protocolDocument(), null, 2)}\n`;
}
