import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EndpointError } from './endpoint-error.js';
import { LifetimeLock, LockHeldError } from './lifetime-lock.js';

const HOME_MODE = 0o700;

/** How often a running daemon checks that its lock files (and its socket) are still its own. */
export const OWNERSHIP_CHECK_MS = 2_000;

/**
 * One daemon per home, whatever it serves (a socket or stdio): creates the home when missing and
 * takes `<home>/magid.lock` for the life of the process.
 */
export function lockHome(home: string): LifetimeLock {
  mkdirSync(home, { recursive: true, mode: HOME_MODE });
  return acquireLock(join(home, 'magid.lock'), 'home_in_use');
}

/** Takes a lifetime lock, naming what it protects when another daemon holds it. */
export function acquireLock(path: string, held: 'home_in_use' | 'socket_path_in_use'): LifetimeLock {
  try {
    return LifetimeLock.acquire(path);
  } catch (error) {
    throw error instanceof LockHeldError ? new EndpointError(held) : error;
  }
}
