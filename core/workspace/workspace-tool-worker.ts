import { parentPort } from 'node:worker_threads';
import { executeWorkspaceTool } from './execute-workspace-tool.js';
import type { WorkspaceToolJob } from './workspace-tool-arguments.js';
import { type WorkspaceToolError, workspaceToolErrorOf } from './workspace-tool-errors.js';

/** A job of a workspace tool thread, numbered so its answer can be matched. */
export interface WorkspaceToolMessage {
  id: number;
  job: WorkspaceToolJob;
}

export type WorkspaceToolAnswer =
  | { id: number; ok: true; output: string }
  | { id: number; ok: false; code: WorkspaceToolError };

/**
 * One workspace tool thread: each job's walk, reads and writes run here synchronously (descriptor numbers
 * must not be reused between steps), one job at a time, so that a slow or hung filesystem stalls only
 * this thread and the job on it.
 */
parentPort?.on('message', ({ id, job }: WorkspaceToolMessage) => {
  let answer: WorkspaceToolAnswer;
  try {
    answer = { id, ok: true, output: executeWorkspaceTool(job) };
  } catch (error) {
    answer = { id, ok: false, code: workspaceToolErrorOf(error) };
  }
  parentPort?.postMessage(answer);
});
