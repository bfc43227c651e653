import type { ChatProvider, ProviderEvent, ProviderRequest, ProviderRound } from './chat-provider.js';
import type { ProviderApi } from './provider-definition.js';
import { ProviderError } from './provider-error.js';

/** A provider turns can run on: the `provider` section's (no name) or a named definition's. */
export interface RoutedProvider {
  /** Null for the `provider` section's (`--provider-base-url`). */
  readonly name: string | null;
  readonly api: ProviderApi;
  readonly adapter: ChatProvider;
}

/** Where a selected model goes: its provider, and the model id that provider knows it by. */
export interface ModelRoute {
  readonly provider: RoutedProvider;
  readonly model: string;
}

/**
 * Sends each round to the provider its model names. A model `NAME/rest` whose `NAME` is a configured
 * provider runs on that provider as `rest`; any other model (OpenRouter's `openai/gpt-4o` included) runs
 * on the default provider as it is. A name that is a provider's always wins: write `DEFAULT/openai/gpt-4o`
 * to reach the default provider's model of that shape.
 */
export class ProviderRouter implements ChatProvider {
  readonly #default: RoutedProvider | null;
  readonly #named: ReadonlyMap<string, RoutedProvider>;

  constructor(defaultProvider: RoutedProvider | null, named: readonly RoutedProvider[]) {
    this.#default = defaultProvider;
    this.#named = new Map(named.map((provider) => [provider.name ?? '', provider]));
  }

  get defaultProvider(): RoutedProvider | null {
    return this.#default;
  }

  /** The providers, the default's first: each once. */
  get providers(): RoutedProvider[] {
    const all = this.#default ? [this.#default] : [];
    for (const provider of this.#named.values()) if (!all.includes(provider)) all.push(provider);
    return all;
  }

  route(model: string): ModelRoute | null {
    const slash = model.indexOf('/');
    if (slash > 0) {
      const named = this.#named.get(model.slice(0, slash));
      if (named && slash < model.length - 1) return { provider: named, model: model.slice(slash + 1) };
    }
    return this.#default ? { provider: this.#default, model } : null;
  }

  /**
   * The id the catalog lists the model under: `NAME/model` for a named provider's, the model itself for
   * the `provider` section's.
   */
  catalogId(model: string): string | null {
    const route = this.route(model);
    if (!route) return null;
    return route.provider.name === null ? route.model : `${route.provider.name}/${route.model}`;
  }

  complete(request: ProviderRequest, onEvent: (event: ProviderEvent) => void): Promise<ProviderRound> {
    const route = this.route(request.selection.model);
    // Admission checks the route; a model that has none cannot get here, but fails plainly if it does.
    if (!route) return Promise.reject(new ProviderError('unreachable'));
    return route.provider.adapter.complete(
      { ...request, selection: { ...request.selection, model: route.model } },
      onEvent,
    );
  }
}
