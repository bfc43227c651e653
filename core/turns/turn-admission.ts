import { WireError } from '../errors.js';
import type { ExecutorRegistry } from '../executors/executor-registry.js';
import { PROFILE_LIMITS } from '../limits.js';
import type { SnapshotPin } from '../registry/registry-snapshot.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import {
  type AcceptedController,
  type ApplicationManifest,
  buildApplicationManifest,
  manifestFieldBytes,
} from './application-manifest.js';

export interface ToolAuthorization {
  resource_id: string;
  revision_id: string;
  revision_sha256: string;
}

/** The `application` member of a `turn.start` payload. */
export interface ApplicationSelection {
  expected_registry_revision: string;
  executor_id: string | null;
  executor_generation: number | null;
  tool_authorizations: ToolAuthorization[];
}

export interface AdmissionInput {
  sessionId: string;
  /** The connection of the initiating controller. */
  connectionId: string;
  /** Whether that connection selected `application_resources_v1`. */
  selected: boolean;
  application: ApplicationSelection | undefined;
  controller: AcceptedController;
}

/** What an admitted turn holds: its manifest (null for an ordinary turn) and its snapshot pin. */
export interface Admission {
  manifest: ApplicationManifest | null;
  pin: SnapshotPin | null;
}

export const admissionRefusals = {
  applicationWithoutProfile: () =>
    new WireError(
      'unsupported_capability',
      'application resources need the application_resources_v1 profile',
    ),
  registryNotEmpty: () =>
    new WireError('unsupported_capability', 'the session registry is not empty: select its snapshot'),
  staleRegistry: () => new WireError('conflict', 'the expected registry revision is not current'),
  duplicateAuthorization: () => new WireError('invalid_payload', 'a tool authorization is repeated'),
  authorizationsMismatch: () =>
    new WireError('conflict', 'the tool authorizations do not match the complete tool set'),
  executorMembers: () =>
    new WireError('invalid_payload', 'executor members must both be set with tools and both be null without'),
  executorNotHeld: () =>
    new WireError('stale_connection', 'the controller does not hold this executor at this generation'),
  manifestTooLarge: () => new WireError('limit_exceeded', 'the application manifest exceeds its byte limit'),
} as const;

/**
 * "Accept the complete snapshot": an ordinary turn only while the session's registry is empty; otherwise
 * the listed registry revision, exactly its tool set with each tool's current revision, and the executor
 * the initiating controller holds at its current generation. The snapshot is pinned here, synchronously,
 * before anything can change the registry; every refusal releases it.
 */
export function admitApplication(
  input: AdmissionInput,
  registry: ResourceRegistry,
  executors: ExecutorRegistry,
): Admission {
  const { application } = input;
  if (application === undefined) {
    if (registry.entryCount(input.sessionId) > 0) throw admissionRefusals.registryNotEmpty();
    return { manifest: null, pin: null };
  }
  if (!input.selected) throw admissionRefusals.applicationWithoutProfile();
  const keys = application.tool_authorizations.map((entry) => entry.resource_id);
  if (new Set(keys).size !== keys.length) throw admissionRefusals.duplicateAuthorization();
  const executorNull = application.executor_id === null && application.executor_generation === null;
  const executorSet = application.executor_id !== null && application.executor_generation !== null;
  if (!executorNull && !executorSet) throw admissionRefusals.executorMembers();

  const pin = registry.snapshot(input.sessionId);
  if (!pin) throw admissionRefusals.staleRegistry();
  try {
    const { snapshot } = pin;
    if (snapshot.registry_revision !== application.expected_registry_revision) {
      throw admissionRefusals.staleRegistry();
    }
    const authorized = new Map(application.tool_authorizations.map((entry) => [entry.resource_id, entry]));
    const complete =
      authorized.size === snapshot.tools.length &&
      snapshot.tools.every((tool) => {
        const entry = authorized.get(tool.resourceId);
        return (
          entry?.revision_id === tool.revisionId && entry.revision_sha256 === tool.descriptor.revision_sha256
        );
      });
    if (!complete) throw admissionRefusals.authorizationsMismatch();
    if (snapshot.tools.length > 0 !== executorSet) throw admissionRefusals.executorMembers();
    const executor =
      executorSet && application.executor_id !== null && application.executor_generation !== null
        ? { executor_id: application.executor_id, executor_generation: application.executor_generation }
        : null;
    if (
      executor &&
      !executors.isCurrent(executor.executor_id, executor.executor_generation, input.connectionId)
    ) {
      throw admissionRefusals.executorNotHeld();
    }
    const manifest = buildApplicationManifest(snapshot, input.controller, executor);
    if (manifestFieldBytes(manifest) > PROFILE_LIMITS.manifest_bytes)
      throw admissionRefusals.manifestTooLarge();
    return { manifest, pin };
  } catch (error) {
    pin.release();
    throw error;
  }
}
