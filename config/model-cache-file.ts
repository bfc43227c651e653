import { join } from 'node:path';
import {
  type CatalogSnapshot,
  EMPTY_CATALOG,
  projectModelListing,
} from '../core/configuration/model-catalog.js';
import { CONFIGURATION_LIMITS } from '../core/limits.js';
import { readTextFile, writePrivateFile } from './private-file.js';

export const MODEL_CACHE_FILE_NAME = 'models.json';

export function modelCachePath(home: string): string {
  return join(home, MODEL_CACHE_FILE_NAME);
}

/**
 * The catalog the last refresh cached, projected again on the way in (the file is the daemon's, but a
 * cache must not be trusted further than a listing). A missing, unreadable or malformed cache is empty.
 */
export async function readModelCache(home: string): Promise<CatalogSnapshot> {
  try {
    const text = await readTextFile(modelCachePath(home));
    if (text === null) return EMPTY_CATALOG;
    const cached = JSON.parse(text) as { models?: unknown; truncated?: unknown; refreshed_at?: unknown };
    const entries = Array.isArray(cached.models) ? (cached.models as unknown[]) : [];
    // One entry at a time, each as its provider listed it (a named provider's name already in its id).
    const seen = new Set<string>();
    const models = entries.flatMap((entry) => {
      const provider = (entry as { provider?: unknown } | null)?.provider;
      const projected = projectModelListing({ data: [entry] }).models.filter((model) => !seen.has(model.id));
      for (const model of projected) seen.add(model.id);
      return typeof provider === 'string' ? projected.map((model) => ({ ...model, provider })) : projected;
    });
    const truncated = models.length > CONFIGURATION_LIMITS.catalog_models;
    return {
      models: models.slice(0, CONFIGURATION_LIMITS.catalog_models),
      truncated: truncated || cached.truncated === true,
      refreshed_at: Number.isSafeInteger(cached.refreshed_at) ? (cached.refreshed_at as number) : null,
    };
  } catch {
    return EMPTY_CATALOG;
  }
}

export async function writeModelCache(home: string, snapshot: CatalogSnapshot): Promise<void> {
  await writePrivateFile(modelCachePath(home), `${JSON.stringify(snapshot)}\n`);
}
