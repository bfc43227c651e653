import type { Socket } from 'node:net';
import { EndpointError } from './endpoint-error.js';
import { nativeAddon, type PeerCredentials } from './native.js';

export type { PeerCredentials } from './native.js';

/** The fd of a connected socket's libuv handle; Node exposes it only as the internal `_handle.fd`. */
function socketFd(socket: Socket): number {
  const handle: unknown = Reflect.get(socket, '_handle');
  if (typeof handle === 'object' && handle !== null && 'fd' in handle) {
    const fd = handle.fd;
    if (typeof fd === 'number' && Number.isInteger(fd) && fd >= 0) return fd;
  }
  throw new EndpointError('socket_has_no_fd');
}

/**
 * The credentials the kernel recorded for the other end of a Unix socket connection (as of its
 * connect(2) or socketpair(2)). Read them before any data: accept with `pauseOnConnect`.
 */
export function peerCredentials(socket: Socket): PeerCredentials {
  return nativeAddon().peerCredentials(socketFd(socket));
}

/** True when the peer runs as the same user as this process. */
export function isSameUser(credentials: PeerCredentials): boolean {
  return process.getuid !== undefined && credentials.uid === process.getuid();
}
