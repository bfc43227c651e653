import type { Clock } from '../clock.js';
import { CONFIGURATION_LIMITS } from '../limits.js';
import { ProviderError } from '../provider/provider-error.js';

/** The fields kept of a listed model; everything else the provider says is dropped. */
export interface CatalogModel {
  id: string;
  owned_by: string | null;
}

export interface CatalogSnapshot {
  models: CatalogModel[];
  /** Whether the provider listed more models than the catalog keeps. */
  truncated: boolean;
  /** Wall-clock milliseconds of the refresh that produced it; null before the first. */
  refreshed_at: number | null;
}

export const EMPTY_CATALOG: CatalogSnapshot = { models: [], truncated: false, refreshed_at: null };

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

function boundedText(value: unknown, maxBytes: number): string | null {
  return typeof value === 'string' && value.length <= maxBytes && VISIBLE_ASCII.test(value) ? value : null;
}

/**
 * The allowlisted, bounded projection of a model listing (`{data:[{id, owned_by, …}]}`): ids of visible
 * ASCII within their bound, each once, in the provider's order, at most `catalog_models` of them. A listing
 * of another shape is malformed; an entry of another shape is skipped.
 */
export function projectModelListing(listing: unknown): Pick<CatalogSnapshot, 'models' | 'truncated'> {
  const data = (listing as { data?: unknown } | null)?.data;
  if (typeof listing !== 'object' || listing === null || !Array.isArray(data)) {
    throw new ProviderError('malformed_listing');
  }
  const models: CatalogModel[] = [];
  const seen = new Set<string>();
  let truncated = false;
  for (const entry of data) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { id, owned_by: owner } = entry as { id?: unknown; owned_by?: unknown };
    const modelId = boundedText(id, CONFIGURATION_LIMITS.model_id_bytes);
    if (modelId === null || seen.has(modelId)) continue;
    if (models.length === CONFIGURATION_LIMITS.catalog_models) {
      truncated = true;
      break;
    }
    seen.add(modelId);
    models.push({ id: modelId, owned_by: boundedText(owner, CONFIGURATION_LIMITS.model_owner_bytes) });
  }
  return { models, truncated };
}

/** How the catalog reaches the disk: its cache file. */
export interface CatalogPersistence {
  write(snapshot: CatalogSnapshot): Promise<void>;
}

/**
 * The model catalog: the cache of the last `catalog.refresh`, kept in memory and in its cache file.
 * Reading it never reaches the provider; only a refresh does, through the configuration worker.
 */
export class ModelCatalog {
  readonly #persistence: CatalogPersistence;
  readonly #clock: Clock;
  #snapshot: CatalogSnapshot;

  constructor(snapshot: CatalogSnapshot, persistence: CatalogPersistence, clock: Clock) {
    this.#snapshot = snapshot;
    this.#persistence = persistence;
    this.#clock = clock;
  }

  get snapshot(): CatalogSnapshot {
    return this.#snapshot;
  }

  has(modelId: string): boolean {
    return this.#snapshot.models.some((model) => model.id === modelId);
  }

  /** Replaces the catalog with the projection of a fresh listing, written to the cache first. */
  async replace(listing: unknown): Promise<CatalogSnapshot> {
    const snapshot: CatalogSnapshot = {
      ...projectModelListing(listing),
      refreshed_at: this.#clock.wallNow(),
    };
    await this.#persistence.write(snapshot);
    this.#snapshot = snapshot;
    return snapshot;
  }
}
