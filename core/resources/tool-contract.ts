import { WireError } from '../errors.js';
import { PROFILE_LIMITS } from '../limits.js';
import { parseStrictJson, StrictJsonError } from './strict-json.js';
import { decodeUtf8Exact, isWellFormedText, scalarCount } from './unicode.js';

/**
 * A tool contract is strict JSON `{input_schema, output_schema, timeout_ms?}`. Each schema is a flat object
 * schema in one exact shape (the "Schemas" callback bound):
 *
 *   {"type":"object", "properties":{...}?, "required":[...]?, "additionalProperties":false}
 *
 * `type` and `additionalProperties:false` are mandatory; absent `properties` means none, absent `required`
 * means `[]`. Each property is exactly one of
 *
 *   {"type":"string", "maxLength":1..4096}      (Unicode scalars)
 *   {"type":"boolean"}
 *   {"type":"integer", "minimum":m, "maximum":M} (safe integers, m <= M, both required)
 *
 * with no other keyword (no `description`, `enum`, `default`, nested objects or arrays). Numbers are judged
 * by value: `1000.0` and `1e3` are the integer 1000.
 */
export type PropertySchema =
  | { readonly type: 'string'; readonly maxLength: number }
  | { readonly type: 'boolean' }
  | { readonly type: 'integer'; readonly minimum: number; readonly maximum: number };

export interface ObjectSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, PropertySchema>>;
  readonly required: readonly string[];
  readonly additionalProperties: false;
}

export interface ToolContract {
  readonly input_schema: ObjectSchema;
  readonly output_schema: ObjectSchema;
  readonly timeout_ms: number;
}

/** Properties one schema may declare; a daemon-chosen bound the spec leaves open. */
export const SCHEMA_MAX_PROPERTIES = 64;

/**
 * Property names: an ASCII letter, then letters, digits and `_`, at most 48 bytes. Leading `_` is excluded,
 * which also keeps `__proto__` out of every schema.
 */
const PROPERTY_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export const TOOL_CONTRACT_REFUSALS = {
  not_utf8: 'the tool contract is not valid UTF-8',
  syntax: 'the tool contract is not valid JSON',
  lone_surrogate: 'the tool contract is not valid JSON',
  duplicate_member: 'the tool contract repeats a member name',
  too_deep: 'the tool contract is nested too deeply',
  not_object: 'the tool contract must be a JSON object',
  unknown_member: 'the tool contract has an unknown member',
  missing_schema: 'the tool contract needs input_schema and output_schema',
  timeout: 'timeout_ms must be an integer from 1000 to 600000',
} as const;

export const SCHEMA_REFUSALS = {
  not_object: 'must be a JSON object',
  unknown_keyword: 'has an unsupported keyword',
  type: 'must have type "object"',
  additional_properties: 'must have additionalProperties false',
  properties: 'properties must be an object',
  too_many_properties: 'declares too many properties',
  property_name: 'has an invalid property name',
  property_schema: 'has a property that is not a string, boolean or integer schema',
  property_keyword: 'has a property with an unsupported keyword',
  string_max_length: 'has a string property without maxLength from 1 to 4096',
  integer_bounds: 'has an integer property without safe-integer minimum <= maximum',
  required: 'required must be an array of declared property names without repeats',
  too_many_required: 'requires too many properties',
} as const;

export type SchemaRefusal = keyof typeof SCHEMA_REFUSALS;
export type SchemaMember = 'input_schema' | 'output_schema';

/** The fixed refusal message for a rule broken inside one of the two schemas. */
export function schemaRefusalMessage(member: SchemaMember, rule: SchemaRefusal): string {
  return `${member} ${SCHEMA_REFUSALS[rule]}`;
}

type SchemaFailure = (rule: SchemaRefusal) => never;

function refuse(message: string): never {
  throw new WireError('invalid_payload', message);
}

type JsonObject = Record<string, unknown>;

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(value: JsonObject, allowed: readonly string[]): boolean {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) return false;
  return true;
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function isSafeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value);
}

const STRING_KEYWORDS = ['type', 'maxLength'] as const;
const BOOLEAN_KEYWORDS = ['type'] as const;
const INTEGER_KEYWORDS = ['type', 'minimum', 'maximum'] as const;
const SCHEMA_KEYWORDS = ['type', 'properties', 'required', 'additionalProperties'] as const;
const CONTRACT_MEMBERS = ['input_schema', 'output_schema', 'timeout_ms'] as const;

/** Every keyword of a property schema is required, so its type says how many members it has. */
const PROPERTY_MEMBERS = {
  string: STRING_KEYWORDS.length,
  boolean: BOOLEAN_KEYWORDS.length,
  integer: INTEGER_KEYWORDS.length,
} as const;

function parsePropertySchema(value: unknown, fail: SchemaFailure): PropertySchema {
  if (!isJsonObject(value)) fail('property_schema');
  switch (value.type) {
    case 'string':
      if (!onlyKeys(value, STRING_KEYWORDS)) fail('property_keyword');
      if (
        !isIntegerIn(
          value.maxLength,
          PROFILE_LIMITS.schema_string_max_length_min,
          PROFILE_LIMITS.schema_string_max_length_max,
        )
      ) {
        fail('string_max_length');
      }
      return Object.freeze({ type: 'string', maxLength: value.maxLength });
    case 'boolean':
      if (!onlyKeys(value, BOOLEAN_KEYWORDS)) fail('property_keyword');
      return Object.freeze({ type: 'boolean' });
    case 'integer': {
      if (!onlyKeys(value, INTEGER_KEYWORDS)) fail('property_keyword');
      const { minimum, maximum } = value;
      if (!isSafeInteger(minimum) || !isSafeInteger(maximum) || minimum > maximum) fail('integer_bounds');
      return Object.freeze({ type: 'integer', minimum, maximum });
    }
    default:
      fail('property_schema');
  }
}

function parseProperties(value: unknown, fail: SchemaFailure): Record<string, PropertySchema> {
  if (value === undefined) return {};
  if (!isJsonObject(value)) fail('properties');
  const names = Object.keys(value);
  if (names.length > SCHEMA_MAX_PROPERTIES) fail('too_many_properties');
  const properties: Record<string, PropertySchema> = {};
  for (const name of names) {
    if (name.length > PROFILE_LIMITS.schema_property_name_bytes || !PROPERTY_NAME.test(name)) {
      fail('property_name');
    }
    properties[name] = parsePropertySchema(value[name], fail);
  }
  return properties;
}

function parseRequired(
  value: unknown,
  properties: Record<string, PropertySchema>,
  fail: SchemaFailure,
): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail('required');
  if (value.length > PROFILE_LIMITS.schema_required_properties) fail('too_many_required');
  const seen = new Set<string>();
  for (const name of value) {
    if (typeof name !== 'string' || !Object.hasOwn(properties, name) || seen.has(name)) {
      fail('required');
    }
    seen.add(name);
  }
  return value;
}

function parseObjectSchema(value: unknown, member: SchemaMember): ObjectSchema {
  const fail: SchemaFailure = (rule) => refuse(schemaRefusalMessage(member, rule));
  if (!isJsonObject(value)) fail('not_object');
  if (!onlyKeys(value, SCHEMA_KEYWORDS)) fail('unknown_keyword');
  if (value.type !== 'object') fail('type');
  if (value.additionalProperties !== false) fail('additional_properties');
  const properties = parseProperties(value.properties, fail);
  const required = parseRequired(value.required, properties, fail);
  return Object.freeze({
    type: 'object',
    properties: Object.freeze(properties),
    required: Object.freeze(required),
    additionalProperties: false,
  });
}

function parseTimeout(value: unknown): number {
  if (value === undefined) return PROFILE_LIMITS.tool_timeout_ms_default;
  if (!isIntegerIn(value, PROFILE_LIMITS.tool_timeout_ms_min, PROFILE_LIMITS.tool_timeout_ms_max)) {
    refuse(TOOL_CONTRACT_REFUSALS.timeout);
  }
  return value;
}

/** Applies the contract rules to parsed JSON, refusing with the first rule it breaks. */
function normalizeContract(contract: unknown): ToolContract {
  if (!isJsonObject(contract)) refuse(TOOL_CONTRACT_REFUSALS.not_object);
  if (!onlyKeys(contract, CONTRACT_MEMBERS)) refuse(TOOL_CONTRACT_REFUSALS.unknown_member);
  if (!Object.hasOwn(contract, 'input_schema') || !Object.hasOwn(contract, 'output_schema')) {
    refuse(TOOL_CONTRACT_REFUSALS.missing_schema);
  }
  return Object.freeze({
    input_schema: parseObjectSchema(contract.input_schema, 'input_schema'),
    output_schema: parseObjectSchema(contract.output_schema, 'output_schema'),
    timeout_ms: parseTimeout(contract.timeout_ms),
  });
}

/** The members a contract's JSON declared, counted on the parsed JSON of a contract that was accepted. */
function declaredMembers(parsed: JsonObject, contract: ToolContract): number {
  let members = Object.keys(parsed).length;
  for (const member of ['input_schema', 'output_schema'] as const) {
    members += Object.keys(parsed[member] as JsonObject).length;
    for (const property of Object.values(contract[member].properties)) {
      members += 1 + PROPERTY_MEMBERS[property.type];
    }
  }
  return members;
}

function contractText(source: Buffer | string): string {
  if (typeof source === 'string') {
    if (!isWellFormedText(source)) refuse(TOOL_CONTRACT_REFUSALS.not_utf8);
    return source;
  }
  return decodeUtf8Exact(source) ?? refuse(TOOL_CONTRACT_REFUSALS.not_utf8);
}

function parseContractJson(text: string): unknown {
  try {
    return parseStrictJson(text);
  } catch (error) {
    if (error instanceof StrictJsonError) refuse(TOOL_CONTRACT_REFUSALS[error.reason]);
    throw error;
  }
}

function colonsIn(text: string): number {
  let count = 0;
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) count++;
  return count;
}

/**
 * `JSON.parse`'s reading of the text, when it is provably the strict reading: it satisfies the contract
 * rules, and the text's colons equal the members it declared. Every string an accepted contract holds is an
 * ASCII keyword or property name (well-formed, without a colon) and its nesting is fixed, so of the strict
 * JSON rules only a repeated name is left unproven, and a repeat leaves one member fewer than were written.
 * Null otherwise, including for every refusal.
 */
function nativelyParsedContract(text: string): ToolContract | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  let contract: ToolContract;
  try {
    contract = normalizeContract(parsed);
  } catch (error) {
    if (error instanceof WireError) return null;
    throw error;
  }
  return declaredMembers(parsed as JsonObject, contract) === colonsIn(text) ? contract : null;
}

/**
 * Reads a tool's captured source into its normalized, frozen contract, or refuses with `invalid_payload`
 * and a fixed message naming the broken rule; a strict JSON refusal comes before any contract rule. The
 * per-source byte bound is checked by the caller.
 */
export function parseToolContract(source: Buffer | string): ToolContract {
  const text = contractText(source);
  return nativelyParsedContract(text) ?? normalizeContract(parseContractJson(text));
}

/** Compact JSON of each property schema, less its numbers. */
const PROPERTY_JSON_BYTES = {
  string: '{"type":"string","maxLength":}'.length,
  boolean: '{"type":"boolean"}'.length,
  integer: '{"type":"integer","minimum":,"maximum":}'.length,
} as const;
const OBJECT_SCHEMA_JSON_BYTES =
  '{"type":"object","properties":{},"required":[],"additionalProperties":false}'.length;
const CONTRACT_JSON_BYTES = '{"input_schema":,"output_schema":,"timeout_ms":}'.length;

/** The length of a safe integer as JSON writes it (`-0` as `0`), without writing it. */
function integerJsonLength(value: number): number {
  let length = value < 0 ? 2 : 1;
  for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) length++;
  return length;
}

function propertyJsonBytes(schema: PropertySchema): number {
  switch (schema.type) {
    case 'string':
      return PROPERTY_JSON_BYTES.string + integerJsonLength(schema.maxLength);
    case 'boolean':
      return PROPERTY_JSON_BYTES.boolean;
    case 'integer':
      return (
        PROPERTY_JSON_BYTES.integer + integerJsonLength(schema.minimum) + integerJsonLength(schema.maximum)
      );
  }
}

function objectSchemaJsonBytes(schema: ObjectSchema): number {
  // Property names are ASCII without quotes or backslashes, so each is its length plus two quotes.
  let bytes = OBJECT_SCHEMA_JSON_BYTES;
  const names = Object.keys(schema.properties);
  for (const name of names) {
    bytes += name.length + 3 + propertyJsonBytes(schema.properties[name] as PropertySchema);
  }
  for (const name of schema.required) bytes += name.length + 2;
  return bytes + Math.max(names.length - 1, 0) + Math.max(schema.required.length - 1, 0);
}

/**
 * The UTF-8 length of the normalized contract as compact JSON, the registry's charge for it: exactly
 * `Buffer.byteLength(JSON.stringify(contract))`, counted from the contract's shape without writing it.
 */
export function contractJsonBytes(contract: ToolContract): number {
  return (
    CONTRACT_JSON_BYTES +
    objectSchemaJsonBytes(contract.input_schema) +
    objectSchemaJsonBytes(contract.output_schema) +
    integerJsonLength(contract.timeout_ms)
  );
}

function matchesProperty(schema: PropertySchema, value: unknown): boolean {
  switch (schema.type) {
    case 'string':
      return typeof value === 'string' && isWellFormedText(value) && scalarCount(value) <= schema.maxLength;
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return (
        typeof value === 'number' &&
        Number.isInteger(value) &&
        value >= schema.minimum &&
        value <= schema.maximum
      );
  }
}

/**
 * Whether a JSON value (tool arguments or a result) satisfies a contract schema: an object with no member
 * the schema does not declare, every required member present, each member of exactly its declared type.
 */
export function validateAgainstSchema(schema: ObjectSchema, value: unknown): boolean {
  if (!isJsonObject(value)) return false;
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(schema.properties, name)) return false;
    if (!matchesProperty(schema.properties[name] as PropertySchema, value[name])) return false;
  }
  return schema.required.every((name) => Object.hasOwn(value, name));
}
