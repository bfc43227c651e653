import type { FastifyInstance } from 'fastify';

/**
 * A test-only wire method, `test.hold`, that stays in flight until the test releases it, so tests can
 * observe what happens to other frames meanwhile. `test.fail` throws a plain error (a bug).
 */
export function heldRoute(): {
  setup: (app: FastifyInstance) => Promise<void>;
  release: () => void;
  started: Promise<void>;
} {
  let release: () => void = () => {};
  let started: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  return {
    release: () => release(),
    started: startedPromise,
    setup: async (app) => {
      app.post(
        '/test.hold',
        { config: { wire: { session: 'null', control: 'null', operation: 'optional' } } },
        async () => {
          started();
          await released;
          return { held: true };
        },
      );
      app.post(
        '/test.fail',
        { config: { wire: { session: 'null', control: 'null', operation: 'null' } } },
        async () => {
          throw new Error('a bug with /secret/path in its message');
        },
      );
    },
  };
}
