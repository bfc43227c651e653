import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { WorkspaceReader } from '../core/capture/workspace-reader.js';

export interface CapturePluginOptions {
  /** The daemon's one workspace reader: its capture worker thread. */
  reader: WorkspaceReader;
  /** How long closing waits for a read still in progress. */
  drainMs: number;
}

export interface CaptureWorker {
  readonly reader: WorkspaceReader;
  /**
   * True once the daemon closed while a read was still blocked on the filesystem. Its thread cannot be
   * stopped, so the process must exit without waiting for it.
   */
  readonly abandoned: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    capture: CaptureWorker;
  }
}

/**
 * The capture worker: workspace files are read on their own thread, so a slow or hung filesystem never
 * stalls the wire. Closing waits a bounded time for a read in progress, then leaves it behind and says so.
 */
const capture: FastifyPluginAsync<CapturePluginOptions> = async (fastify, { reader, drainMs }) => {
  let abandoned = false;
  fastify.decorate('capture', {
    reader,
    get abandoned() {
      return abandoned;
    },
  } satisfies CaptureWorker);
  fastify.addHook('onClose', async () => {
    if (await reader.close(drainMs)) return;
    abandoned = true;
    fastify.log.warn(
      { waited_ms: drainMs },
      'a capture is still waiting on the filesystem; stopping without it',
    );
  });
};

export default fp(capture, { name: 'capture', fastify: '5.x' });
