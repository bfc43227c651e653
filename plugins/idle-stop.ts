import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock, Timer } from '../core/clock.js';

export interface IdleStopOptions {
  clock: Clock;
  /** 0 disables the idle stop. */
  idleTimeoutMs: number;
  /** Runs in the same tick as the final idle check, so no connection can slip in between. */
  onIdle: () => void;
}

export interface Idle {
  /** Keeps the daemon from idling out until the returned function is called. */
  hold(): () => void;
  readonly armed: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    idle: Idle;
  }
}

/**
 * Idle stop: after `idleTimeoutMs` with no connection and no held work (requests in flight are answered by the
 * drain that follows), the
 * daemon stops. The timer starts only when the last of those ends, and any of them cancels it.
 */
const idleStop: FastifyPluginAsync<IdleStopOptions> = async (fastify, options) => {
  let holds = 0;
  let timer: Timer | null = null;
  let stopped = false;

  const isIdle = () => fastify.framing.connections.size === 0 && holds === 0;

  function reconsider(): void {
    if (options.idleTimeoutMs <= 0 || stopped) return;
    if (!isIdle()) {
      timer?.cancel();
      timer = null;
      return;
    }
    timer ??= options.clock.setTimeout(() => {
      timer = null;
      if (!isIdle() || stopped) return;
      stopped = true;
      options.onIdle();
    }, options.idleTimeoutMs);
  }

  fastify.decorate('idle', {
    hold() {
      holds++;
      reconsider();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds--;
        reconsider();
      };
    },
    get armed() {
      return timer !== null;
    },
  } satisfies Idle);

  fastify.framing.onConnectionsChanged(reconsider);
  fastify.addHook('onReady', async () => reconsider());
  fastify.addHook('onClose', async () => {
    stopped = true;
    timer?.cancel();
  });
};

export default fp(idleStop, { name: 'idle-stop', fastify: '5.x', dependencies: ['framing'] });
