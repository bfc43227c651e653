import { APPLICATION_RESOURCES } from '../connections/connection.js';
import { PROFILE_LIMITS, TURN_LIMITS } from '../limits.js';

/** Offered when the provider is configured as sending documented reasoning summaries. */
export const PROVIDER_REASONING_SUMMARY = 'provider_reasoning_summary';

/** Capability tokens every daemon offers; others are offered by configuration (`CapabilityCatalog.offer`). */
export const KNOWN_CAPABILITIES: readonly string[] = [APPLICATION_RESOURCES];

/** Retired tokens: requesting one rejects the whole initialize. */
export const RETIRED_CAPABILITIES: readonly string[] = [
  'application_callbacks_inline_v1',
  'application_callbacks_session_v1',
];

export interface WireSurface {
  /** Method name to whether it belongs to the profile. */
  methods: Iterable<[string, { profile?: boolean }]>;
  events: Iterable<[string, { profile: boolean }]>;
}

/** The `capabilities` object of initialize and `capabilities`, fixed for a connection's life. */
export function describeCapabilities(
  negotiated: readonly string[],
  surface: WireSurface,
): Record<string, unknown> {
  const methods = [...surface.methods];
  const events = [...surface.events];
  const names = (list: Array<[string, { profile?: boolean }]>, profile: boolean) =>
    list
      .filter(([, options]) => (options.profile === true) === profile)
      .map(([name]) => name)
      .sort();
  const capabilities: Record<string, unknown> = {
    operations: names(methods, false),
    events: names(events, false),
  };
  if (negotiated.includes(APPLICATION_RESOURCES)) {
    const operations = names(methods, true);
    capabilities.application_callbacks = {
      profile: APPLICATION_RESOURCES,
      source_kinds: ['inline', 'workspace_file'],
      registry: operations.includes('session.resources.list'),
      reconnect_evidence: operations.includes('turn.application_evidence'),
      operations,
      events: names(events, true),
      ...PROFILE_LIMITS,
    };
  }
  if (negotiated.includes(PROVIDER_REASONING_SUMMARY)) {
    capabilities.provider_reasoning_summary = { summary_bytes: TURN_LIMITS.reasoning_summary_bytes };
  }
  return capabilities;
}

/**
 * The capabilities of each selection, described once: the wire surface is fixed once the daemon is
 * ready, and a connection's description never changes. `json` is the whole `capabilities` result,
 * serialized once.
 */
export class CapabilityCatalog {
  readonly #surface: WireSurface;
  readonly #described = new Map<string, { capabilities: Record<string, unknown>; json: string }>();
  readonly #offered: string[] = [...KNOWN_CAPABILITIES];

  constructor(surface: WireSurface) {
    this.#surface = surface;
  }

  /** The tokens `initialize` may negotiate, in the order a selection lists them. */
  get offered(): readonly string[] {
    return this.#offered;
  }

  /** Offers `token` too; called while the daemon is built, before any connection. */
  offer(token: string): void {
    if (!this.#offered.includes(token)) this.#offered.push(token);
  }

  of(negotiated: readonly string[]): { capabilities: Record<string, unknown>; json: string } {
    const key = negotiated.join(' ');
    let described = this.#described.get(key);
    if (!described) {
      const capabilities = describeCapabilities(negotiated, this.#surface);
      const json = JSON.stringify({ negotiated_capabilities: negotiated, capabilities });
      described = { capabilities, json };
      this.#described.set(key, described);
    }
    return described;
  }
}
