import { PROFILE_LIMITS, SERVICE_LIMITS } from '../limits.js';

/** The bounds the registry enforces, by their spec names. */
export type RegistryLimitName =
  | 'tools_per_session'
  | 'skills_per_session'
  | 'registry_bytes'
  | 'combined_skill_bytes'
  | 'retained_snapshots'
  | 'retained_entries'
  | 'retained_bytes'
  | 'registry_sessions'
  | 'registry_idle_timeout_ms'
  | 'capture_reservation_bytes'
  | 'registration_deadline_ms';

export type RegistryLimits = { readonly [K in RegistryLimitName]: number };

/** The profile's bounds, with smaller ones substituted only where a test makes saturation reachable. */
export function registryLimits(overrides: Partial<RegistryLimits> = {}): RegistryLimits {
  return Object.freeze({
    tools_per_session: PROFILE_LIMITS.tools_per_session,
    skills_per_session: PROFILE_LIMITS.skills_per_session,
    registry_bytes: PROFILE_LIMITS.registry_bytes,
    combined_skill_bytes: PROFILE_LIMITS.combined_skill_bytes,
    retained_snapshots: PROFILE_LIMITS.retained_snapshots,
    retained_entries: PROFILE_LIMITS.retained_entries,
    retained_bytes: PROFILE_LIMITS.retained_bytes,
    registry_sessions: PROFILE_LIMITS.registry_sessions,
    registry_idle_timeout_ms: PROFILE_LIMITS.registry_idle_timeout_ms,
    capture_reservation_bytes: PROFILE_LIMITS.capture_reservation_bytes,
    registration_deadline_ms: SERVICE_LIMITS.registration_deadline_ms,
    ...overrides,
  });
}
