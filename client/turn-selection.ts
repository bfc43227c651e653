import type { ApplicationExecutor } from './executor.js';
import type { ApplicationSelection, ListResult } from './wire-types.js';

/** The `application` member selecting the whole current registry, with `executor` for its tools. */
export function selection(
  listing: ListResult,
  executor: ApplicationExecutor | undefined,
): ApplicationSelection {
  const tools = listing.entries.filter((entry) => entry.kind === 'tool');
  return {
    expected_registry_revision: listing.registry_revision,
    executor_id: tools.length > 0 ? (executor?.id ?? null) : null,
    executor_generation: tools.length > 0 ? (executor?.generation ?? null) : null,
    tool_authorizations: tools.map(({ resource_id, revision_id, revision_sha256 }) => ({
      resource_id,
      revision_id,
      revision_sha256,
    })),
  };
}
