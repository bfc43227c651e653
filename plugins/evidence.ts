import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import { type EvidenceLimits, EvidenceStore } from '../core/turns/evidence-store.js';
import { saturationLogger } from './saturation-log.js';

declare module 'fastify' {
  interface FastifyInstance {
    evidence: EvidenceStore;
  }
}

/**
 * Reconnect evidence: one memory-only store per daemon, filled by turns, read by their controllers; its
 * bound's saturation and clearing are logged once each.
 */
const evidence: FastifyPluginAsync<{ clock: Clock; limits?: Partial<EvidenceLimits> }> = async (
  fastify,
  { clock, limits },
) => {
  fastify.decorate('evidence', new EvidenceStore(clock, limits, saturationLogger(fastify.log)));
};

export default fp(evidence, { name: 'evidence', fastify: '5.x' });
