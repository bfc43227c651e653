import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { REGISTRY_MUTATION, RegisterPayload, RegisterResult } from './registry-schemas.js';

/**
 * `session.resources.register`: admission (payload, capture slot, name, expected revision, capacity),
 * then the capture, then publication, which rechecks everything the admission relied on.
 *
 * The capture starts one event-loop turn after admission: frames already read (a list, an unregister, a
 * takeover claim, the connection's close) are served first, so a capture is never started on behalf of an
 * authority that is already gone. A workspace file is read by the capture worker thread while the wire
 * goes on; a control change, a disconnect or the deadline meanwhile answers the request with its refusal at
 * once, and the slot stays taken until the read returns.
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
        await staged.capture();
        return staged.publish();
      } finally {
        staged.discard();
      }
    },
  );
};

export default sessionResourcesRegister;
