import type { Clock } from '../clock.js';
import { CONFIGURATION_LIMITS } from '../limits.js';
import { ProviderError } from '../provider/provider-error.js';

/** The fields kept of a listed model; everything else the provider says is dropped. */
export interface CatalogModel {
  /** `NAME/id` for a named provider's model, the id alone for the `provider` section's. */
  id: string;
  owned_by: string | null;
  /** The named provider that listed it; absent for the `provider` section's. */
  provider?: string;
}

/** One provider's answer to a refresh: its listing, or its failure. */
export type ListingResult =
  | { name: string | null; listing: unknown }
  | { name: string | null; failure: ProviderError };

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
 * The allowlisted, bounded projection of a model listing (`{data:[{id, owned_by, …}]}`, as OpenAI's APIs
 * and Anthropic's answer): ids of visible ASCII within their bound, each once, in the provider's order, at
 * most `maxModels` of them. A named provider's ids are prefixed with its name (`NAME/id`, within the same
 * bound). A listing of another shape is malformed; an entry of another shape is skipped.
 */
export function projectModelListing(
  listing: unknown,
  provider: string | null = null,
  maxModels: number = CONFIGURATION_LIMITS.catalog_models,
): Pick<CatalogSnapshot, 'models' | 'truncated'> {
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
    const listed = typeof id === 'string' && provider !== null ? `${provider}/${id}` : id;
    const modelId = boundedText(listed, CONFIGURATION_LIMITS.model_id_bytes);
    if (modelId === null || seen.has(modelId)) continue;
    if (models.length === maxModels) {
      truncated = true;
      break;
    }
    seen.add(modelId);
    models.push({
      id: modelId,
      owned_by: boundedText(owner, CONFIGURATION_LIMITS.model_owner_bytes),
      ...(provider !== null ? { provider } : {}),
    });
  }
  return { models, truncated };
}

/** Each provider's share of the catalog's models, in order: an equal part, the rest to the first ones. */
export function catalogShares(
  providers: number,
  total: number = CONFIGURATION_LIMITS.catalog_models,
): number[] {
  return Array.from(
    { length: providers },
    (_, i) => Math.floor(total / providers) + (i < total % providers ? 1 : 0),
  );
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
    return this.replaceAll([{ name: null, listing }]);
  }

  /**
   * Replaces each provider's models with its fresh listing, each within its share of the catalog, written
   * to the cache first. A provider whose listing failed keeps what the catalog had of it; when every one
   * failed, the first failure is thrown and nothing changes.
   */
  async replaceAll(results: readonly ListingResult[]): Promise<CatalogSnapshot> {
    const failed = results.flatMap((result) => ('failure' in result ? [result.failure] : []));
    if (failed.length === results.length && failed[0]) throw failed[0];
    const shares = catalogShares(results.length);
    const models: CatalogModel[] = [];
    let truncated = false;
    results.forEach((result, i) => {
      const share = shares[i] ?? 0;
      if ('listing' in result) {
        const projected = projectModelListing(result.listing, result.name, share);
        models.push(...projected.models);
        truncated ||= projected.truncated;
        return;
      }
      const kept = this.#snapshot.models.filter((model) => (model.provider ?? null) === result.name);
      models.push(...kept.slice(0, share));
      truncated ||= kept.length > share;
    });
    const snapshot: CatalogSnapshot = { models, truncated, refreshed_at: this.#clock.wallNow() };
    await this.#persistence.write(snapshot);
    this.#snapshot = snapshot;
    return snapshot;
  }
}
