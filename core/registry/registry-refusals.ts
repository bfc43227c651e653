import { WireError } from '../errors.js';

/**
 * Every refusal of the session resource registry, with fixed text. None names a resource, a path or any
 * content: the client already knows what it asked for.
 */
export const registryRefusals = {
  captureBusy: () =>
    new WireError('configuration_busy', 'the capture worker is busy with another registration'),
  nameExists: () =>
    new WireError('conflict', 'a resource of this name exists; replace it with its current revision'),
  kindCollision: () => new WireError('conflict', 'the name is registered as the other resource kind'),
  staleRevision: () => new WireError('conflict', 'the expected resource revision is not current'),
  staleRegistryRevision: () => new WireError('conflict', 'the expected registry revision is not current'),
  registryGone: () => new WireError('conflict', 'the registry expired while the registration was staged'),
  resourceNotFound: () => new WireError('resource_not_found', 'no such resource in the session registry'),
  authorityEnded: () =>
    new WireError('stale_connection', 'the registering request no longer holds the session control'),
  stagingDiscarded: () => new WireError('stale_connection', 'the staged registration was discarded'),
  shuttingDown: () => new WireError('shutting_down'),
  deadlinePassed: () =>
    new WireError('stale_connection', 'the registration was not captured within its deadline'),
  tooManyTools: () =>
    new WireError('limit_exceeded', 'the session registry holds the maximum number of tools'),
  tooManySkills: () =>
    new WireError('limit_exceeded', 'the session registry holds the maximum number of skills'),
  registryBytes: () =>
    new WireError('limit_exceeded', 'the session registry storage budget would be exceeded'),
  combinedSkillBytes: () =>
    new WireError('limit_exceeded', 'the combined skill text budget would be exceeded'),
  registrySessions: () =>
    new WireError('limit_exceeded', 'the daemon holds the maximum number of registries'),
  retainedEntries: () =>
    new WireError('limit_exceeded', 'the daemon retains the maximum number of resource entries'),
  retainedSnapshots: () =>
    new WireError('limit_exceeded', 'the daemon retains the maximum number of snapshots'),
  retainedBytes: () => new WireError('limit_exceeded', 'the daemon resource byte budget would be exceeded'),
} as const;
