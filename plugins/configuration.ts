import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ConfigurationWorker } from '../core/configuration/configuration-worker.js';

declare module 'fastify' {
  interface FastifyInstance {
    configurationWorker: ConfigurationWorker;
    /** Waits for the configuration worker and holds it until the request's answer has been written. */
    enterConfiguration(request: FastifyRequest): Promise<void>;
    /** Runs `release` once the request's answer has been written. */
    afterAnswer(request: FastifyRequest, release: () => void): void;
  }
}

/**
 * The configuration worker on the wire: the auth, catalog and settings methods enter it from their
 * handlers, and it is let go only after their answer is out, so a reader never sees a write half done.
 */
const configuration: FastifyPluginAsync = async (fastify) => {
  const worker = new ConfigurationWorker();
  const releases = new WeakMap<FastifyRequest, Array<() => void>>();

  const afterAnswer = (request: FastifyRequest, release: () => void): void => {
    const list = releases.get(request);
    if (list) list.push(release);
    else releases.set(request, [release]);
  };

  fastify.decorate('configurationWorker', worker);
  fastify.decorate('afterAnswer', afterAnswer);
  fastify.decorate('enterConfiguration', async (request: FastifyRequest) => {
    afterAnswer(request, await worker.acquire());
  });
  fastify.addHook('onResponse', (request, _reply, done) => {
    const list = releases.get(request);
    releases.delete(request);
    for (const release of list ?? []) release();
    done();
  });
};

export default fp(configuration, { name: 'configuration', fastify: '5.x' });
