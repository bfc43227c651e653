/** Every reason the local endpoint refuses to start or to serve, once, with its fixed message. */
export const ENDPOINT_MESSAGES = {
  socket_path_not_absolute: 'the socket path must be absolute',
  socket_path_too_long: 'the socket path must be shorter than 108 bytes',
  socket_path_has_nul: 'the socket path must not contain a NUL byte',
  socket_directory_unsafe: 'socket directory must be a directory of mode 0700 owned by the current user',
  private_socket_path_too_long: 'no private socket name fits beside the socket path within 107 bytes',
  not_a_socket: 'the bound socket path is not a socket',
  socket_has_no_fd: 'the socket has no file descriptor (it is not connected or not a Unix socket)',
  lock_held: 'another magid already holds the lock for this home',
  home_in_use: 'another magid already serves this home',
  socket_path_in_use: 'another magid already serves this socket path',
  lock_file_unsafe: 'the lock file must be a regular file owned by the current user',
  lock_file_unstable: 'the lock file was replaced while it was being locked',
  native_addon_missing:
    'the native addon has no prebuilt for this platform and is not built (run npm rebuild magi-daemon)',
  native_addon_invalid: 'the native addon does not export peerCredentials and flock',
} as const;

export type EndpointErrorReason = keyof typeof ENDPOINT_MESSAGES;

/** A refusal of the local endpoint (socket path, directory, lock, peer); the message is fixed text. */
export class EndpointError extends Error {
  readonly reason: EndpointErrorReason;

  constructor(reason: EndpointErrorReason) {
    super(ENDPOINT_MESSAGES[reason]);
    this.name = 'EndpointError';
    this.reason = reason;
  }
}
