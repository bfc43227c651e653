import { PROFILE_LIMITS } from '../limits.js';
import type { RegistrySnapshot } from '../registry/registry-snapshot.js';
import type { ResourceDescriptor } from '../registry/resource-revision.js';
import { utf8ByteLength } from '../resources/unicode.js';

export const APPLICATION_PROFILE = 'application_resources_v1';

/** A tool as the accepted turn binds it: its exact revision and its deadline, never its contract's body. */
export interface ToolManifest {
  readonly name: string;
  readonly resource_id: string;
  readonly revision_id: string;
  readonly revision_sha256: string;
  readonly timeout_ms: number;
}

/** The `turn.start` request that was accepted: its connection action, not a verified person. */
export interface AcceptedController {
  readonly instance_id: string;
  readonly connection_id: string;
  readonly operation_id: string;
  readonly grant_generation: number;
}

export interface AcceptedExecutor {
  readonly executor_id: string;
  readonly executor_generation: number;
}

/**
 * What a selected turn accepted, identical in its acceptance, its durable user record, claim snapshots,
 * terminals, lookups and evidence. Never rewritten: resume, rotation and takeover leave it as stamped.
 */
export interface ApplicationManifest {
  readonly profile: typeof APPLICATION_PROFILE;
  readonly registry_revision: string;
  readonly resources: readonly ResourceDescriptor[];
  readonly tools: readonly ToolManifest[];
  readonly accepted_controller: AcceptedController;
  readonly accepted_executor: AcceptedExecutor | null;
}

export function buildApplicationManifest(
  snapshot: RegistrySnapshot,
  controller: AcceptedController,
  executor: AcceptedExecutor | null,
): ApplicationManifest {
  return deepFreeze({
    profile: APPLICATION_PROFILE,
    registry_revision: snapshot.registry_revision,
    resources: snapshot.descriptors.map((descriptor) => ({ ...descriptor })),
    tools: snapshot.tools.map((tool) => ({
      name: tool.name,
      resource_id: tool.resourceId,
      revision_id: tool.revisionId,
      revision_sha256: tool.descriptor.revision_sha256,
      timeout_ms: tool.contract?.timeout_ms ?? PROFILE_LIMITS.tool_timeout_ms_default,
    })),
    accepted_controller: { ...controller },
    accepted_executor: executor ? { ...executor } : null,
  });
}

/** Encoded bytes of the `{"application_manifest":…}` field, escaping included. */
export function manifestFieldBytes(manifest: ApplicationManifest | null): number {
  return utf8ByteLength(JSON.stringify({ application_manifest: manifest }));
}

/**
 * The same value as an ordinary v2 connection sees it: every `application_manifest` member removed, at any
 * depth (a lookup of a claim holds one inside its snapshot; history records hold them too).
 */
export function withoutManifests(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutManifests);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (key !== 'application_manifest') copy[key] = withoutManifests(member);
  }
  return copy;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
