import { readTextFile, removePrivateFile, writePrivateFile } from '../config/private-file.js';
import type { ToolCallPayload, ToolOutcome } from './wire-types.js';

/** A call the executor received, kept from before its handler runs until the daemon settled it. */
export interface KeptCall {
  session_id: string;
  turn_id: string;
  call_id: string;
  name: string;
  arguments: Record<string, unknown>;
  timeout_ms: number;
  resource_id: string;
  revision_id: string;
  revision_sha256: string;
  /** The handler's outcome once it returned; null while it runs (or when the application died meanwhile). */
  outcome: ToolOutcome | null;
  /** The operation ids of its result's submissions: one of them may have been accepted. */
  operations: string[];
}

/** A turn started with this executor, kept so that an application that restarts can claim and look it up. */
export interface KeptTurn {
  session_id: string;
  turn_id: string;
}

/** What an executor keeps across a restart of the application (docs/client.md, "After your application crashed"). */
export interface ExecutorRecord {
  version: 1;
  /** The daemon instance that issued the executor: another one means the executor is gone. */
  instance_id: string;
  executor_id: string;
  executor_generation: number;
  resume_secret: string;
  /** A rotation's new secret, kept until the rotation is known to be confirmed or cancelled. */
  candidate_secret: string | null;
  calls: KeptCall[];
  turns: KeptTurn[];
}

/**
 * Where an executor keeps its record. `save` replaces the whole record (null: nothing is kept any more)
 * and must be durable when it resolves; the executor never calls it twice at once. The record holds the
 * resume secret and the calls' arguments and results: keep it private to the application.
 */
export interface ExecutorStore {
  load(): Promise<ExecutorRecord | null>;
  save(record: ExecutorRecord | null): Promise<void>;
}

/** The kept record is not one this library wrote. */
export class ExecutorStoreError extends Error {
  override readonly name = 'ExecutorStoreError';
  constructor() {
    super('the executor store does not hold an executor record');
  }
}

/**
 * A store in one JSON file: written atomically (a private temporary file, flushed and renamed into
 * place) with mode 0600, its directory created with mode 0700, and removed when nothing is kept.
 */
export function fileStore(path: string): ExecutorStore {
  return {
    async load() {
      const text = await readTextFile(path);
      if (text === null) return null;
      return parseRecord(text);
    },
    async save(record) {
      if (record === null) await removePrivateFile(path);
      else await writePrivateFile(path, `${JSON.stringify(record)}\n`);
    },
  };
}

/** The most turns a record keeps: the newest ones. */
export const KEPT_TURNS = 32;

/** A call's kept form from its dispatch. */
export function keptCall(sessionId: string, payload: ToolCallPayload): KeptCall {
  return {
    session_id: sessionId,
    turn_id: payload.turn_id,
    call_id: payload.call_id,
    name: payload.name,
    arguments: payload.arguments,
    timeout_ms: payload.timeout_ms,
    resource_id: payload.resource_id,
    revision_id: payload.revision_id,
    revision_sha256: payload.revision_sha256,
    outcome: null,
    operations: [],
  };
}

function parseRecord(text: string): ExecutorRecord {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    throw new ExecutorStoreError();
  }
  if (!isRecord(record)) throw new ExecutorStoreError();
  return record;
}

function isRecord(value: unknown): value is ExecutorRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<ExecutorRecord>;
  return (
    record.version === 1 &&
    typeof record.instance_id === 'string' &&
    typeof record.executor_id === 'string' &&
    Number.isSafeInteger(record.executor_generation) &&
    typeof record.resume_secret === 'string' &&
    (record.candidate_secret === null || typeof record.candidate_secret === 'string') &&
    Array.isArray(record.calls) &&
    Array.isArray(record.turns)
  );
}
