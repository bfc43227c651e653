import { sha256Hex } from '../hashing.js';
import { MCP_LIMITS } from './mcp-limits.js';

/** What providers accept as a function name; every name the model is offered for an MCP tool matches it. */
export const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Each character (code point) outside the name alphabet. */
const OUTSIDE_ALPHABET = /[^a-zA-Z0-9_-]/gu;

/** Hex digits of the hash that keeps a shortened or colliding name apart from every other. */
const HASH_DIGITS = 8;

/** `text` with each character outside `[a-zA-Z0-9_-]` replaced by `_`: ASCII, so its bytes are its characters. */
export function nameSegment(text: string): string {
  return text.replace(OUTSIDE_ALPHABET, '_');
}

/** `mcp_<server>_`, the beginning every plain name of a server's tools shares. */
export function serverPrefix(server: string): string {
  return `mcp_${nameSegment(server)}_`;
}

/** `mcp_<server>_<tool>` with both parts made to fit the alphabet, however long. */
export function plainName(server: string, tool: string): string {
  return `${serverPrefix(server)}${nameSegment(tool)}`;
}

/**
 * The plain name cut to leave room for `_` and a hash of the server's key and the tool's raw name: the
 * same for the same server and tool whatever else is configured or listed, and apart from the names of
 * every other pair.
 */
export function hashedName(server: string, tool: string): string {
  const suffix = `_${sha256Hex(`${server}\u0000${tool}`).slice(0, HASH_DIGITS)}`;
  return plainName(server, tool).slice(0, MCP_LIMITS.name_bytes - suffix.length) + suffix;
}
