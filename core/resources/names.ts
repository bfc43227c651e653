import { WireError } from '../errors.js';
import { PROFILE_LIMITS } from '../limits.js';
import { BUILTIN_TOOL_NAMES } from './builtin-tools.js';
import { isWellFormedText, utf8ByteLength } from './unicode.js';

/** The two kinds of session resource. */
export type ResourceKind = 'tool' | 'skill';

/** `[a-z][a-z0-9_]*`, at most 48 bytes (ASCII, so bytes are characters). */
/** A resource name's alphabet; its 48-byte bound is PROFILE_LIMITS.name_bytes. */
export const RESOURCE_NAME_PATTERN = '^[a-z][a-z0-9_]*$';
const RESOURCE_NAME = new RegExp(RESOURCE_NAME_PATTERN);

export function isValidResourceName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= PROFILE_LIMITS.name_bytes && RESOURCE_NAME.test(name);
}

/**
 * A description is well-formed Unicode text of at most 512 UTF-8 bytes without NUL. It may be empty:
 * the name already identifies the resource.
 */
export function isValidResourceDescription(description: unknown): description is string {
  return (
    typeof description === 'string' &&
    utf8ByteLength(description) <= PROFILE_LIMITS.description_bytes &&
    !description.includes('\u0000') &&
    isWellFormedText(description)
  );
}

/** The whole `mcp_` namespace belongs to MCP servers, whether or not one is configured. */
export const MCP_TOOL_PREFIX = 'mcp_';

export type NameReservation = 'builtin_tool' | 'mcp' | 'discovered_skill' | 'disabled_name';

export interface NameCatalogSources {
  /** Defaults to the daemon's own tools. */
  builtinTools?: Iterable<string>;
  /** Skills discovered at startup, before enablement filtering. */
  discoveredSkills?: Iterable<string>;
  /** Configured disabled tool and skill names. */
  disabledNames?: Iterable<string>;
}

function foldCase(name: string): string {
  return name.toLowerCase();
}

function foldedSet(names: Iterable<string> | undefined): ReadonlySet<string> {
  return new Set(Array.from(names ?? [], foldCase));
}

/**
 * The names application resources may not take, compared case-insensitively: a resource named
 * `read_file` and a disabled skill configured as `Read_File` collide.
 */
export class NameCatalog {
  private readonly builtinTools: ReadonlySet<string>;
  private readonly discoveredSkills: ReadonlySet<string>;
  private readonly disabledNames: ReadonlySet<string>;

  constructor(sources: NameCatalogSources = {}) {
    this.builtinTools = foldedSet(sources.builtinTools ?? BUILTIN_TOOL_NAMES);
    this.discoveredSkills = foldedSet(sources.discoveredSkills);
    this.disabledNames = foldedSet(sources.disabledNames);
  }

  /** Why the name is taken, or null when an application resource may use it. */
  reservation(name: string): NameReservation | null {
    const folded = foldCase(name);
    if (this.builtinTools.has(folded)) return 'builtin_tool';
    if (folded.startsWith(MCP_TOOL_PREFIX)) return 'mcp';
    if (this.discoveredSkills.has(folded)) return 'discovered_skill';
    if (this.disabledNames.has(folded)) return 'disabled_name';
    return null;
  }

  isReserved(name: string): boolean {
    return this.reservation(name) !== null;
  }

  /** Refuses a reserved name with `conflict`, as a registration refused because its name is taken. */
  assertAvailable(name: string): void {
    if (this.isReserved(name)) throw new WireError('conflict', 'the resource name is reserved');
  }
}
