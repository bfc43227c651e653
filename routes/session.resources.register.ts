import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { REGISTRY_MUTATION, RegisterPayload, RegisterResult } from './registry-schemas.js';

/**
 * `session.resources.register`: admission (payload, capture slot, name, expected revision, capacity),
 * then the capture, then publication, which rechecks everything the admission relied on.
 *
 * The capture runs one event-loop turn after admission: frames already read (a list, an unregister, a
 * takeover claim, the connection's close) are served first, so a capture is never read on behalf of an
 * authority that is already gone, and the slot's holder does not delay them. The capture itself is
 * synchronous. Whatever happens, the slot is released.
 */
const sessionResourcesRegister: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.resources.register',
    {
      schema: { body: RegisterPayload, response: { 200: RegisterResult } },
      config: { wire: REGISTRY_MUTATION },
    },
    async (request) => {
      const staged = fastify.stageRegistration(request.wire, request.body);
      try {
        await nextTurn();
        staged.capture();
        return staged.publish();
      } finally {
        staged.discard();
      }
    },
  );
};

export default sessionResourcesRegister;
