import { PROFILE_LIMITS } from '../core/limits.js';
import { SCHEMA_MAX_PROPERTIES } from '../core/resources/tool-contract.js';

export interface ToolContractFixture {
  /** The contract text, exactly the requested number of UTF-8 bytes. */
  text: string;
  /** Bytes of the contract written compactly, before any whitespace. */
  structureBytes: number;
  /** The indentation width the text is pretty-printed with. */
  indent: number;
  /** Whitespace appended after the value to reach the exact size. */
  trailingWhitespaceBytes: number;
  propertiesPerSchema: number;
  requiredPerSchema: number;
}

/** JSON.stringify indents by at most ten spaces. */
const INDENT_MAX = 10;
const NAME_FILLER = '_with_a_long_descriptive_name_to_reach_the_name_bound';

function propertyName(side: string, index: number): string {
  const base = `${side}_parameter_${String(index).padStart(2, '0')}`;
  return `${base}${NAME_FILLER}`.slice(0, PROFILE_LIMITS.schema_property_name_bytes);
}

/** Integers with the widest bounds, strings with the longest maxLength, and booleans, in turn. */
function propertySchema(index: number): Record<string, unknown> {
  switch (index % 3) {
    case 0:
      return { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
    case 1:
      return { type: 'string', maxLength: PROFILE_LIMITS.schema_string_max_length_max };
    default:
      return { type: 'boolean' };
  }
}

function fullestSchema(side: string): Record<string, unknown> {
  const names = Array.from({ length: SCHEMA_MAX_PROPERTIES }, (_, index) => propertyName(side, index));
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((name, index) => [name, propertySchema(index)])),
    required: names.slice(0, PROFILE_LIMITS.schema_required_properties),
    additionalProperties: false,
  };
}

/**
 * A valid tool contract of exactly `bytes` UTF-8 bytes with the most structure a contract may declare:
 * both schemas at the property bound with names at the name bound, the required bound filled, and the
 * largest timeout. It is pretty-printed with the widest indentation that fits; whitespace after the value
 * (valid JSON) makes up the rest. Throws when even the compact structure does not fit.
 */
export function toolContractOfExactly(bytes: number): ToolContractFixture {
  const contract = {
    input_schema: fullestSchema('input'),
    output_schema: fullestSchema('output'),
    timeout_ms: PROFILE_LIMITS.tool_timeout_ms_max,
  };
  const structureBytes = Buffer.byteLength(JSON.stringify(contract));
  if (structureBytes > bytes) throw new RangeError(`the contract structure alone is ${structureBytes} bytes`);
  let indent = 0;
  let text = JSON.stringify(contract);
  for (let width = 1; width <= INDENT_MAX; width++) {
    const wider = JSON.stringify(contract, null, width);
    if (Buffer.byteLength(wider) + 1 > bytes) break;
    indent = width;
    text = wider;
  }
  const padding = bytes - Buffer.byteLength(text);
  const trailing = padding === 0 ? '' : `${' '.repeat(padding - 1)}\n`;
  return {
    text: `${text}${trailing}`,
    structureBytes,
    indent,
    trailingWhitespaceBytes: padding,
    propertiesPerSchema: SCHEMA_MAX_PROPERTIES,
    requiredPerSchema: PROFILE_LIMITS.schema_required_properties,
  };
}
