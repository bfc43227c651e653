import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import { TitleWorker } from '../core/sessions/title-worker.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Titles of untitled sessions, asked for after their first completed turn; null without a provider. */
    titles: TitleWorker | null;
  }
}

/**
 * Session titles: one worker per daemon over the provider and the store. At shutdown it is waited for
 * (each title at most until its deadline) after the turns have ended and before the store closes.
 */
const titles: FastifyPluginAsync<{ clock: Clock }> = async (fastify, { clock }) => {
  const provider = fastify.chatProvider;
  const worker = provider
    ? new TitleWorker({
        clock,
        history: fastify.history,
        provider,
        holdIdle: () => fastify.idle.hold(),
        // The session and the kind of failure only: never the provider's words or the conversation.
        failed: (sessionId, reason) =>
          fastify.log.warn({ session_id: sessionId, reason }, 'the session title could not be made'),
      })
    : null;
  fastify.decorate('titles', worker);
  // A release or a disconnect lets a session's control go only once its title is stored or given up.
  if (worker)
    fastify.sessions.provideControlHold((sessionId) =>
      worker.isRunning(sessionId) ? worker.settled(sessionId) : null,
    );
  fastify.addHook('onClose', async () => worker?.close());
};

export default fp(titles, {
  name: 'titles',
  fastify: '5.x',
  dependencies: ['history', 'provider', 'idle-stop', 'control'],
});
