import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { WireWatch } from '../../client/wire-client.js';

/** docs/protocol.schema.json, as committed. */
export const PROTOCOL_DOCUMENT = JSON.parse(
  readFileSync(new URL('../../docs/protocol.schema.json', import.meta.url), 'utf8'),
) as { $id: string; $defs: Record<string, unknown> };

const ajv = new Ajv2020({ allErrors: false });
ajv.addKeyword('x-profile');
ajv.addSchema(PROTOCOL_DOCUMENT);

const compiled = new Map<string, ValidateFunction | null>();

/**
 * The validator of one `$defs` entry of the document, or null when there is none by that name. Each is
 * compiled the first time it is asked for, so a test process pays only for the frames it sees.
 */
export function validatorOf(name: string): ValidateFunction | null {
  let validate = compiled.get(name);
  if (validate === undefined) {
    validate =
      name in PROTOCOL_DOCUMENT.$defs
        ? (ajv.getSchema(`${PROTOCOL_DOCUMENT.$id}#/$defs/${name}`) ?? null)
        : null;
    compiled.set(name, validate);
  }
  return validate;
}

/** Why `value` is not a `name`, or null when it is one. */
export function schemaViolation(name: string, value: unknown): string | null {
  const validate = validatorOf(name);
  if (validate === null) return `no schema ${name}`;
  if (validate(value)) return null;
  return `${name}: ${ajv.errorsText(validate.errors)}`;
}

interface SentRequest {
  method: string;
  frame: unknown;
}

/** At most this many violations are kept: the first ones say what is wrong. */
const KEPT_VIOLATIONS = 10;

/**
 * Checks every frame a client exchanges against docs/protocol.schema.json: each event the daemon sent, each
 * response (a result against its method's `result`, a refusal against `error`), and each request the daemon
 * accepted against its method's `request` (envelope rules and payload). Frames a test sends on purpose
 * outside the wire are refused by the daemon and never count against it.
 */
export class WireSchemaCheck implements WireWatch {
  readonly violations: string[] = [];
  /** Requests in flight by id; a test may send one id twice (the daemon refuses the second). */
  readonly #inFlight = new Map<string, SentRequest[]>();
  frames = 0;

  sent(line: string): void {
    for (const text of line.split('\n')) {
      const frame = parseObject(text);
      if (frame?.type !== 'request' || typeof frame.id !== 'string' || typeof frame.method !== 'string')
        continue;
      const list = this.#inFlight.get(frame.id) ?? [];
      list.push({ method: frame.method, frame });
      this.#inFlight.set(frame.id, list);
    }
  }

  received(line: string): void {
    const frame = parseObject(line);
    this.frames += 1;
    if (frame === null) this.#violation(`a line that is not a JSON object: ${line.slice(0, 200)}`);
    else if (frame.type === 'event') {
      const name = typeof frame.event === 'string' ? frame.event : '';
      this.#check(`${name}.event`, frame, `event ${name}`);
    } else this.#response(frame);
  }

  #response(frame: Record<string, unknown>): void {
    this.#check('response', frame, 'response');
    const sent = typeof frame.id === 'string' ? this.#take(frame.id, frame.ok === true) : null;
    // A method the document does not declare is a test's own route (docs/protocol.schema.json is checked
    // against the daemon's methods apart).
    if (frame.ok !== true || sent === null || validatorOf(`${sent.method}.request`) === null) return;
    this.#check(`${sent.method}.result`, frame.result, `${sent.method} result`);
    this.#check(`${sent.method}.request`, sent.frame, `${sent.method} request accepted`);
  }

  /** The request a response answers: a success answers the first of that id, a refusal the last. */
  #take(id: string, ok: boolean): SentRequest | null {
    const list = this.#inFlight.get(id);
    if (!list || list.length === 0) return null;
    const taken = ok ? list.shift()! : list.pop()!;
    if (list.length === 0) this.#inFlight.delete(id);
    return taken;
  }

  #check(name: string, value: unknown, what: string): void {
    const violation = schemaViolation(name, value);
    if (violation !== null) this.#violation(`${what}: ${violation}: ${JSON.stringify(value).slice(0, 300)}`);
  }

  #violation(text: string): void {
    if (this.violations.length < KEPT_VIOLATIONS) this.violations.push(text);
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
