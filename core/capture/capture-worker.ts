import { parentPort } from 'node:worker_threads';
import { isWireError } from '../errors.js';
import { contentSha256, type DescriptorHashes, revisionSha256 } from '../resources/revision-hash.js';
import { readWorkspaceFile } from './workspace-file.js';
import type { WorkspaceReadRequest } from './workspace-reader.js';

/** A request of the capture thread, numbered so its answers can be matched. */
export interface CaptureJob extends WorkspaceReadRequest {
  id: number;
}

/**
 * A job is answered twice when its file is read: `read` with the bytes, then `confirmed` with their hashes
 * once the last check passed; or once, with a refusal, whenever it comes.
 */
export type CaptureAnswer =
  | { id: number; stage: 'read'; bytes: Uint8Array; text: string }
  | ({ id: number; stage: 'confirmed' } & DescriptorHashes)
  | { id: number; stage: 'refused'; code: string; message: string };

function refusal(id: number, error: unknown): CaptureAnswer {
  return isWireError(error)
    ? { id, stage: 'refused', code: error.code, message: error.message }
    : { id, stage: 'refused', code: 'internal_error', message: '' };
}

/**
 * The capture worker's thread: the descriptor walk, the bounded read, the stat comparisons and the hashes of
 * one workspace file at a time, synchronously (descriptor numbers must not be reused between steps), so
 * that a slow or hung filesystem stalls only this thread. The bytes are sent as soon as they are read, so
 * the main thread checks their content while this thread walks up from the workspace root and hashes.
 */
parentPort?.on('message', (job: CaptureJob) => {
  let answer: CaptureAnswer;
  try {
    const { bytes, text, finish } = readWorkspaceFile(job);
    parentPort?.postMessage({ id: job.id, stage: 'read', bytes, text } satisfies CaptureAnswer);
    try {
      finish();
      answer = {
        id: job.id,
        stage: 'confirmed',
        contentSha256: contentSha256(bytes),
        revisionSha256: revisionSha256({ ...job.resource, captured: bytes }),
      };
    } catch (error) {
      answer = refusal(job.id, error);
    }
  } catch (error) {
    answer = refusal(job.id, error);
  }
  parentPort?.postMessage(answer);
});
