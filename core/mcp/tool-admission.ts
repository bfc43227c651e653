import { cutUtf8, utf8ByteLength } from '../resources/unicode.js';
import { MCP_LIMITS } from './mcp-limits.js';
import type { McpTool } from './mcp-types.js';
import { hashedName, nameSegment, plainName, serverPrefix } from './tool-names.js';

/** Why a tool a server listed is not offered. */
export type McpSkipReason =
  | 'tool_invalid'
  | 'name_too_long'
  | 'duplicate_name'
  | 'schema_invalid'
  | 'schema_too_deep'
  | 'schema_too_large';

/** A tool left out, named as its server lists it (cut to the name bound) when it has a name at all. */
export interface SkippedTool {
  tool: string | null;
  reason: McpSkipReason;
}

/** Which of a server's tools the configuration offers: all by default. */
export interface ToolSelection {
  /** Only these raw names, when given. */
  enabled: readonly string[] | null;
  /** Never these raw names. */
  disabled: readonly string[];
}

interface Candidate {
  tool: string;
  plain: string;
  description: string;
  inputSchema: Readonly<Record<string, unknown>>;
}

/**
 * Chooses which of the tools one server lists the model is offered, page by page in the server's order,
 * up to `tools_per_server`, and the name each is offered under (`tool-names.ts`).
 *
 * A tool keeps its plain name `mcp_<server>_<tool>` unless that name could be another's, when it takes the
 * hashed one: it is over `name_bytes`; another configured server's plain prefix begins with this server's
 * and the name with that prefix (`mcp_a_b_c` could be server `a`'s `b_c` or server `a_b`'s `c`: the
 * shorter server's tool is hashed, as are the tools of two keys made alike by the replacement); or a tool
 * of the same server has the same plain name and this one's name needed characters replaced. Each rule
 * reads only the configuration and the listing, never which server started first, so a name stays the
 * same across restarts. The server is always called with the raw name.
 */
export class ToolAdmission {
  readonly skipped: SkippedTool[] = [];
  readonly #server: string;
  readonly #overlapping: string[];
  readonly #selection: ToolSelection;
  readonly #candidates: Candidate[] = [];

  constructor(server: string, configuredServers: Iterable<string>, selection: ToolSelection) {
    this.#server = server;
    this.#selection = selection;
    const own = serverPrefix(server);
    this.#overlapping = [...configuredServers]
      .filter((other) => other !== server && serverPrefix(other).startsWith(own))
      .map(serverPrefix);
  }

  get full(): boolean {
    return this.#candidates.length >= MCP_LIMITS.tools_per_server;
  }

  /** Takes one page of the listing; returns how many of its tools were left over once full. */
  add(page: readonly unknown[]): number {
    for (let i = 0; i < page.length; i++) {
      if (this.full) return page.length - i;
      const candidate = this.#check(page[i]);
      if (candidate === null) continue;
      if ('reason' in candidate) this.skipped.push(candidate);
      else this.#candidates.push(candidate);
    }
    return 0;
  }

  /** The tools offered, named, in the server's order; a second tool of the same raw name is skipped. */
  tools(): McpTool[] {
    const sharedPlain = new Map<string, number>();
    for (const { plain } of this.#candidates) sharedPlain.set(plain, (sharedPlain.get(plain) ?? 0) + 1);
    const taken = new Set<string>();
    const tools: McpTool[] = [];
    for (const { tool, plain, description, inputSchema } of this.#candidates) {
      const hashed =
        plain.length > MCP_LIMITS.name_bytes ||
        this.#overlapping.some((prefix) => plain.startsWith(prefix)) ||
        ((sharedPlain.get(plain) ?? 0) > 1 && nameSegment(tool) !== tool);
      const name = hashed ? hashedName(this.#server, tool) : plain;
      if (taken.has(name)) {
        this.skipped.push({ tool, reason: 'duplicate_name' });
        continue;
      }
      taken.add(name);
      tools.push(Object.freeze({ name, server: this.#server, tool, description, inputSchema }));
    }
    return tools;
  }

  /** The tool as a candidate, why it is skipped, or null when the configuration leaves it out. */
  #check(raw: unknown): Candidate | SkippedTool | null {
    if (!isPlainObject(raw)) return { tool: null, reason: 'tool_invalid' };
    const { name: tool, description, inputSchema } = raw;
    if (typeof tool !== 'string' || tool === '') return { tool: null, reason: 'tool_invalid' };
    const shown = cutUtf8(tool, MCP_LIMITS.tool_name_bytes);
    if (utf8ByteLength(tool) > MCP_LIMITS.tool_name_bytes) return { tool: shown, reason: 'name_too_long' };
    const { enabled, disabled } = this.#selection;
    if ((enabled !== null && !enabled.includes(tool)) || disabled.includes(tool)) return null;
    if (description !== undefined && typeof description !== 'string') {
      return { tool, reason: 'tool_invalid' };
    }
    if (!isPlainObject(inputSchema) || inputSchema.type !== 'object')
      return { tool, reason: 'schema_invalid' };
    // Measured on the value before it is encoded: encoding a value nested thousands deep would throw.
    if (exceedsDepth(inputSchema, MCP_LIMITS.schema_depth)) return { tool, reason: 'schema_too_deep' };
    if (utf8ByteLength(JSON.stringify(inputSchema)) > MCP_LIMITS.schema_bytes) {
      return { tool, reason: 'schema_too_large' };
    }
    return {
      tool,
      plain: plainName(this.#server, tool),
      // Through UTF-8 and back first: a lone surrogate a server sent (JSON can carry one) is U+FFFD.
      description: cutUtf8(
        Buffer.from(description ?? '', 'utf8').toString('utf8'),
        MCP_LIMITS.description_bytes,
      ),
      inputSchema,
    };
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
