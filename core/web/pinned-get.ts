import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { FetchTarget, ResolvedAddress } from './fetch-target.js';

/**
 * A lookup that answers with addresses already resolved and checked, so the connection cannot go to an
 * address a second resolution might give.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all === true) {
      callback(
        null,
        addresses.map(({ address, family }) => ({ address, family })),
      );
      return;
    }
    const wanted = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const chosen = addresses.find(({ family }) => !wanted || family === wanted) ?? addresses[0]!;
    callback(null, chosen.address, chosen.family);
  };
}

/**
 * One GET over `node:http` or `node:https` on a connection of its own (closed with the answer), to the
 * target's checked addresses, the TLS server name being the host. It follows no redirect. Resolves with
 * the response once its headers arrive; rejects when none comes: the connection failed, the headers were
 * refused, or `signal` aborted first.
 */
export function pinnedGet(
  target: FetchTarget,
  headers: OutgoingHttpHeaders,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const { url, host } = target;
    const secure = url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    const request = send(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers,
        agent: false,
        lookup: pinnedLookup(target.addresses),
        ...(secure && isIP(host) === 0 ? { servername: host } : {}),
        signal,
      },
      (response) => {
        // A reader iterating the body sees its errors; one that has stopped reading has no use for them.
        response.on('error', () => {});
        resolve(response);
      },
    );
    request.on('error', reject);
    request.end();
  });
}
