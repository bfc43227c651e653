import { parentPort } from 'node:worker_threads';
import { isWireError } from '../errors.js';
import { sha256Hex } from '../hashing.js';
import { captureWorkspaceFile } from './workspace-file.js';
import type { WorkspaceReadRequest } from './workspace-reader.js';

/** A request of the capture thread, numbered so its answer can be matched. */
export interface CaptureJob extends WorkspaceReadRequest {
  id: number;
}

export type CaptureAnswer =
  | { id: number; ok: true; bytes: Uint8Array; text: string; contentSha256: string }
  | { id: number; ok: false; code: string; message: string };

/**
 * The capture worker's thread: the descriptor walk, the bounded read, the stat comparisons and the hash of
 * one workspace file at a time, synchronously (descriptor numbers must not be reused between steps), so
 * that a slow or hung filesystem stalls only this thread.
 */
parentPort?.on('message', (job: CaptureJob) => {
  let answer: CaptureAnswer;
  try {
    const { bytes, text } = captureWorkspaceFile(job);
    answer = { id: job.id, ok: true, bytes, text, contentSha256: sha256Hex(bytes) };
  } catch (error) {
    answer = isWireError(error)
      ? { id: job.id, ok: false, code: error.code, message: error.message }
      : { id: job.id, ok: false, code: 'internal_error', message: '' };
  }
  parentPort?.postMessage(answer);
});
