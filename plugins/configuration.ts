import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { readModelCache, writeModelCache } from '../config/model-cache-file.js';
import { PrivateFileError } from '../config/private-file.js';
import { readSettingsFile, SettingsFileError, writeSettingsFile } from '../config/settings-file.js';
import type { Clock } from '../core/clock.js';
import { ConfigurationWorker } from '../core/configuration/configuration-worker.js';
import { ModelCatalog } from '../core/configuration/model-catalog.js';
import type { SettingsDocument } from '../core/configuration/model-settings.js';
import { SettingsStore } from '../core/configuration/settings-store.js';
import { CONFIGURATION_LIMITS } from '../core/limits.js';

export interface ConfigurationPluginOptions {
  home: string;
  clock: Clock;
  /** The `--model` the daemon started with. */
  defaultModel: string | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    configurationWorker: ConfigurationWorker;
    /** Waits for the configuration worker and holds it until the request's answer has been written. */
    enterConfiguration(request: FastifyRequest): Promise<void>;
    /** Runs `release` once the request's answer has been written. */
    afterAnswer(request: FastifyRequest, release: () => void): void;
    /** Aborted when the daemon starts draining: a refresh still waiting on the provider gives up. */
    configurationDrain: AbortSignal;
    modelSettings: SettingsStore;
    modelCatalog: ModelCatalog;
  }
}

/**
 * Configuration on the wire: the model settings and the model catalog, read from the home at startup, and
 * the one configuration worker that the auth, catalog and settings methods enter from their handlers. The
 * worker is let go only after their answer is out, so no answer ever shows a write half done.
 */
const configuration: FastifyPluginAsync<ConfigurationPluginOptions> = async (fastify, options) => {
  const { home } = options;
  const worker = new ConfigurationWorker();
  const releases = new WeakMap<FastifyRequest, Array<() => void>>();
  const drain = new AbortController();

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
  fastify.decorate('configurationDrain', drain.signal);
  fastify.decorate(
    'modelSettings',
    new SettingsStore({
      document: await startupSettings(home, (fields, message) => fastify.log.warn(fields, message)),
      defaultModel: options.defaultModel,
      maxPins: CONFIGURATION_LIMITS.project_pins,
      persistence: {
        read: () => readSettingsFile(home),
        write: (document) => writeSettingsFile(home, document),
        // A file the daemon cannot read is as unusable as one it cannot parse.
        isInvalid: (error) => error instanceof SettingsFileError || error instanceof PrivateFileError,
      },
    }),
  );
  fastify.decorate(
    'modelCatalog',
    new ModelCatalog(
      await readModelCache(home),
      { write: (snapshot) => writeModelCache(home, snapshot) },
      options.clock,
    ),
  );

  fastify.addHook('onResponse', (request, _reply, done) => {
    const list = releases.get(request);
    releases.delete(request);
    for (const release of list ?? []) release();
    done();
  });
  fastify.framing.onDraining(() => drain.abort());
};

/** The settings file at startup; one the daemon cannot use is reported (never its content) and ignored. */
async function startupSettings(
  home: string,
  warn: (fields: Record<string, unknown>, message: string) => void,
): Promise<SettingsDocument | null> {
  try {
    return await readSettingsFile(home);
  } catch (error) {
    if (error instanceof SettingsFileError) {
      warn({ pointer: error.pointer }, 'the settings file is not valid; running on the default settings');
    } else if (error instanceof PrivateFileError) {
      warn({ code: error.code }, 'the settings file cannot be read; running on the default settings');
    } else throw error;
    return null;
  }
}

export default fp(configuration, { name: 'configuration', fastify: '5.x', dependencies: ['framing'] });
