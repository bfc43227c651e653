import { cutUtf8 } from '../resources/unicode.js';
import { MCP_LIMITS } from './mcp-limits.js';
import type { McpTool } from './mcp-types.js';

const MODEL_NAME = /^[a-z][a-z0-9_]*$/;

/** Why a tool a server listed is not offered; a warning names only the server and this. */
export type McpSkipReason =
  | 'tool_invalid'
  | 'name_too_long'
  | 'name_invalid'
  | 'duplicate_name'
  | 'ambiguous_name'
  | 'schema_invalid'
  | 'schema_too_deep'
  | 'schema_too_large';

/**
 * Chooses which of the tools one server lists the model is offered, page by page in the server's order,
 * up to `tools_per_server`.
 *
 * Prefixed names never collide across servers: `mcp_a_b_c` could be server `a`'s tool `b_c` or server
 * `a_b`'s tool `c`, so when another configured server's name is this one's plus `_…` and the prefixed name
 * starts with that server's prefix, the tool is left to the longer server name (`ambiguous_name`). The
 * rule reads only the configuration, so which server gets a name never depends on which started first.
 */
export class ToolAdmission {
  readonly tools: McpTool[] = [];
  readonly skipped: McpSkipReason[] = [];
  readonly #server: string;
  readonly #longerPrefixes: string[];
  readonly #names = new Set<string>();

  constructor(server: string, configuredServers: Iterable<string>) {
    this.#server = server;
    this.#longerPrefixes = [...configuredServers]
      .filter((other) => other.startsWith(`${server}_`))
      .map((other) => `mcp_${other}_`);
  }

  get full(): boolean {
    return this.tools.length >= MCP_LIMITS.tools_per_server;
  }

  /** Takes one page of the listing; returns how many of its tools were left over once full. */
  add(page: readonly unknown[]): number {
    for (let i = 0; i < page.length; i++) {
      if (this.full) return page.length - i;
      const admitted = this.#admit(page[i]);
      if (typeof admitted === 'string') this.skipped.push(admitted);
      else this.tools.push(admitted);
    }
    return 0;
  }

  #admit(raw: unknown): McpTool | McpSkipReason {
    if (!isPlainObject(raw)) return 'tool_invalid';
    const { name: tool, description, inputSchema } = raw;
    if (
      typeof tool !== 'string' ||
      tool === '' ||
      (description !== undefined && typeof description !== 'string')
    ) {
      return 'tool_invalid';
    }
    const name = `mcp_${this.#server}_${tool}`;
    if (Buffer.byteLength(name, 'utf8') > MCP_LIMITS.name_bytes) return 'name_too_long';
    if (!MODEL_NAME.test(name)) return 'name_invalid';
    if (this.#names.has(name)) return 'duplicate_name';
    if (this.#longerPrefixes.some((prefix) => name.startsWith(prefix))) return 'ambiguous_name';
    if (!isPlainObject(inputSchema) || inputSchema.type !== 'object') return 'schema_invalid';
    // Measured on the value before it is encoded: encoding a value nested thousands deep would throw.
    if (exceedsDepth(inputSchema, MCP_LIMITS.schema_depth)) return 'schema_too_deep';
    if (Buffer.byteLength(JSON.stringify(inputSchema), 'utf8') > MCP_LIMITS.schema_bytes) {
      return 'schema_too_large';
    }
    this.#names.add(name);
    return Object.freeze({
      name,
      server: this.#server,
      tool,
      // Through UTF-8 and back first: a lone surrogate a server sent (JSON can carry one) is U+FFFD.
      description: cutUtf8(
        Buffer.from(description ?? '', 'utf8').toString('utf8'),
        MCP_LIMITS.description_bytes,
      ),
      inputSchema,
    });
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether arrays and objects nest more than `limit` levels (`{}` is one), walked without recursion. */
export function exceedsDepth(value: object, limit: number): boolean {
  const pending: Array<[object, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (depth > limit) return true;
    for (const child of Object.values(node)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
