import { MCP_SUPERVISION } from './mcp-limits.js';

/** Why a server stopped serving, as warnings name it. */
export type LossReason =
  | 'spawn_failed'
  | 'start_timeout'
  | 'start_failed'
  | 'unreachable'
  | 'exited'
  | 'connection_lost'
  | 'unresponsive';

export interface Loss {
  reason: LossReason;
  /** A fixed code the failure carried (`ENOENT`, `HTTP 401`), never text the server or the system wrote. */
  detail?: string;
}

const ERRNO_CODE = /^E[A-Z0-9]+$/;

/** The errno name an error carries itself or through its `cause` (as `fetch` wraps it), if any. */
export function errnoCode(error: unknown): string | undefined {
  for (let current = error, hops = 0; hops < 3; hops++) {
    if (typeof current !== 'object' || current === null) return undefined;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && ERRNO_CODE.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The one line `status` shows for a loss: the daemon's own words and fixed codes, then the last line the
 * server wrote on stderr, if any (secrets replaced and bounded by the caller).
 */
export function lossText(loss: Loss, startTimeoutMs: number, lastLine: string | undefined): string {
  const said = lastLine === undefined || lastLine === '' ? '' : `; its last stderr line: ${lastLine}`;
  return `${lossWords(loss, startTimeoutMs)}${said}`;
}

function lossWords(loss: Loss, startTimeoutMs: number): string {
  const detail = loss.detail === undefined ? '' : ` (${loss.detail})`;
  switch (loss.reason) {
    case 'spawn_failed':
      return `its command could not be started${detail}`;
    case 'start_timeout':
      return `it did not answer initialize and tools/list within ${startTimeoutMs} ms`;
    case 'start_failed':
      return `it refused initialize or tools/list${detail}`;
    case 'unreachable':
      return `it could not be reached at its URL${detail}`;
    case 'exited':
      return 'it exited';
    case 'connection_lost':
      return `the connection to it was lost${detail}`;
    case 'unresponsive':
      return `${MCP_SUPERVISION.call_timeouts} calls in a row timed out; it was taken for hung`;
  }
}
