import { createServer, type Server, type Socket } from 'node:net';
import { isSameUser, peerCredentials } from '../endpoint/peer-credentials.js';

export interface ListenerHandlers {
  /** Serves the wire on a socket whose peer is the daemon's own user. */
  wire(socket: Socket): void;
  /** Serves plain HTTP (the optional debug inspection); absent when it is off. */
  http?: (socket: Socket) => void;
  /** A connection was refused (other user, or the daemon is stopping). */
  refused?: (reason: 'peer_uid' | 'peer_unknown' | 'stopping') => void;
}

export interface Listener {
  server: Server;
  /** From now on every new connection is closed at once, before any byte is read or written. */
  refuseNew(): void;
}

/**
 * The Unix-socket listener. Each connection's peer credentials are read before any of its bytes;
 * a peer of another user is closed unread. With debug HTTP on, a first byte that can start an HTTP
 * request line hands the socket to the HTTP server; everything else is the wire.
 */
export function createListener(handlers: ListenerHandlers, maxConnections: number): Listener {
  let refusing = false;
  const server = createServer({ pauseOnConnect: true }, (socket) => {
    if (refusing) return refuse(socket, 'stopping');
    let sameUser = false;
    try {
      sameUser = isSameUser(peerCredentials(socket));
    } catch {
      return refuse(socket, 'peer_unknown');
    }
    if (!sameUser) return refuse(socket, 'peer_uid');
    const http = handlers.http;
    if (!http) return handlers.wire(socket);
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      const byte = first[0] ?? 0;
      if (byte >= 0x41 && byte <= 0x5a) {
        // The HTTP server attaches its parser but does not start a socket that was handed to it.
        http(socket);
        socket.resume();
      } else handlers.wire(socket);
    });
    socket.resume();
  });
  server.maxConnections = maxConnections;

  function refuse(socket: Socket, reason: 'peer_uid' | 'peer_unknown' | 'stopping'): void {
    socket.destroy();
    handlers.refused?.(reason);
  }

  return {
    server,
    refuseNew: () => {
      refusing = true;
    },
  };
}
