import { parentPort, workerData } from 'node:worker_threads';
import { ScanCache } from './scan-cache.js';
import {
  type ScannedWorkspace,
  ScanRefusal,
  type ScanRefusalReason,
  type ScanRequest,
  scanWorkspace,
} from './workspace-scan.js';

export type ScanAnswer = { ok: true; scan: ScannedWorkspace } | { ok: false; reason: ScanRefusalReason };

export interface ScanWorkerData {
  /** Set to 1 by the owner when it gives up on the scan in progress: the walk then ends at its next folder. */
  stop: Int32Array;
}

const { stop } = workerData as ScanWorkerData;
/** What this thread's scans learned of its workspace, for the next one. */
const cache = new ScanCache();

/**
 * A scan thread: each workspace walk runs here synchronously (descriptor numbers must not be reused between
 * steps), so a slow or hung filesystem stalls only this thread. The descriptors of a scan stay open for the
 * main thread, which shares them and closes them once bwrap has them.
 */
parentPort?.on('message', (request: ScanRequest) => {
  let answer: ScanAnswer;
  try {
    answer = {
      ok: true,
      scan: scanWorkspace(request, { stopped: () => Atomics.load(stop, 0) !== 0, cache }),
    };
  } catch (error) {
    answer = { ok: false, reason: error instanceof ScanRefusal ? error.reason : 'workspace_unavailable' };
  }
  parentPort?.postMessage(answer);
});
