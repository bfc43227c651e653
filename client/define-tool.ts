import type { Static, TBoolean, TInteger, TObject, TString } from 'typebox';
import { WireError } from '../core/errors.js';
import { PROFILE_LIMITS } from '../core/limits.js';
import { isValidResourceDescription, isValidResourceName } from '../core/resources/names.js';
import { parseToolContract } from '../core/resources/tool-contract.js';
import { utf8ByteLength } from '../core/resources/unicode.js';
import type { ToolCall, ToolHandler } from './executor-types.js';
import type { ResourceSpec } from './resource-spec.js';

/**
 * The property schemas a contract may hold (docs/protocol.md section 10): `Type.String({maxLength})`,
 * `Type.Boolean()`, `Type.Integer({minimum, maximum})`, each optionally `Type.Optional(...)`. Anything
 * else (numbers, arrays, nested objects, unions) does not compile; the bounds and
 * `additionalProperties: false` are checked when the tool is defined.
 */
export type ContractProperty = TString | TBoolean | TInteger;

/** A flat object schema of contract properties, as `Type.Object({...}, {additionalProperties: false})`. */
export type ContractSchema = TObject<Record<string, ContractProperty>>;

/** A handler of a defined tool: its arguments and result are the static types of its schemas. */
export type TypedToolHandler<Input extends ContractSchema, Output extends ContractSchema> = (
  args: Static<Input>,
  call: ToolCall,
) => Static<Output> | Promise<Static<Output>>;

export interface ToolDefinitionOptions<Input extends ContractSchema, Output extends ContractSchema> {
  /** `[a-z][a-z0-9_]*`, at most 48 bytes. */
  name: string;
  /** At most 512 UTF-8 bytes, no NUL; shown to the model. */
  description: string;
  input: Input;
  output: Output;
  /** The call's deadline, 1,000 to 600,000 ms; the daemon's default (120,000) when absent. */
  timeoutMs?: number;
  handler: TypedToolHandler<Input, Output>;
}

/**
 * A tool checked against the daemon's contract rules. It is itself the registration spec
 * `session.registerTool` takes (`name`, `description` and an inline `source` holding the contract JSON);
 * `toolHandlers` gives its handler to an executor.
 */
export interface DefinedTool<
  Input extends ContractSchema = ContractSchema,
  Output extends ContractSchema = ContractSchema,
> extends ResourceSpec {
  readonly name: string;
  readonly description: string;
  readonly source: { readonly kind: 'inline'; readonly content: string };
  /** The contract JSON, `{input_schema, output_schema, timeout_ms?}`, exactly as the daemon receives it. */
  readonly contract: string;
  readonly input: Input;
  readonly output: Output;
  readonly timeoutMs: number | undefined;
  /** A method, so that a tool of any schemas is a `DefinedTool` (as `toolHandlers` takes them). */
  handler(args: Static<Input>, call: ToolCall): Static<Output> | Promise<Static<Output>>;
}

/** A tool definition the daemon would refuse; `reason` is the daemon's own fixed text for the rule. */
export class ToolContractError extends Error {
  override readonly name = 'ToolContractError';
  readonly tool: string;
  readonly reason: string;

  constructor(tool: string, reason: string) {
    super(`tool ${JSON.stringify(tool)}: ${reason}`);
    this.tool = tool;
    this.reason = reason;
  }
}

const INVALID_NAME = 'the name must match [a-z][a-z0-9_]* and take at most 48 bytes';
const INVALID_DESCRIPTION = 'the description must be text of at most 512 UTF-8 bytes without NUL';
const CONTRACT_TOO_LARGE = `the contract JSON takes more than ${PROFILE_LIMITS.tool_source_bytes} bytes`;

/** The contract JSON of the schemas: TypeBox schemas are JSON Schema, their own markers not enumerable. */
function contractJson(input: ContractSchema, output: ContractSchema, timeoutMs: number | undefined): string {
  return JSON.stringify({
    input_schema: input,
    output_schema: output,
    ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }),
  });
}

/**
 * Defines an application tool from TypeBox schemas, refusing at once (ToolContractError) what the daemon
 * would refuse at registration: the name, the description and the contract are judged by the daemon's own
 * rules. The handler's arguments and result are typed from `input` and `output`.
 */
export function defineTool<Input extends ContractSchema, Output extends ContractSchema>(
  options: ToolDefinitionOptions<Input, Output>,
): DefinedTool<Input, Output> {
  const { name, description, input, output, timeoutMs, handler } = options;
  if (!isValidResourceName(name)) throw new ToolContractError(String(name), INVALID_NAME);
  if (!isValidResourceDescription(description)) throw new ToolContractError(name, INVALID_DESCRIPTION);
  const contract = contractJson(input, output, timeoutMs);
  if (utf8ByteLength(contract) > PROFILE_LIMITS.tool_source_bytes) {
    throw new ToolContractError(name, CONTRACT_TOO_LARGE);
  }
  try {
    parseToolContract(contract);
  } catch (error) {
    if (error instanceof WireError) throw new ToolContractError(name, error.message);
    throw error;
  }
  return Object.freeze({
    name,
    description,
    source: Object.freeze({ kind: 'inline' as const, content: contract }),
    contract,
    input,
    output,
    timeoutMs,
    handler,
  });
}

/**
 * The handlers an executor takes (`client.startExecutor(toolHandlers(tools))`), by tool name. The daemon
 * checks each call's arguments against the input schema before dispatching it, and each result against
 * the output schema before accepting it, so the typed handler stands in for the untyped one here.
 */
export function toolHandlers(tools: readonly DefinedTool[]): Record<string, ToolHandler> {
  const handlers: Record<string, ToolHandler> = {};
  for (const tool of tools) {
    if (Object.hasOwn(handlers, tool.name)) {
      throw new ToolContractError(tool.name, 'two tools have this name');
    }
    handlers[tool.name] = tool.handler as ToolHandler;
  }
  return handlers;
}
