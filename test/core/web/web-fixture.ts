import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Test } from 'tap';
import { WebFetcher, type WebFetchOptions, type WebFetchOutcome } from '../../../core/web/web-fetch.js';
import { WEB_FETCH_MESSAGES, type WebFetchError } from '../../../core/web/web-fetch-error.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** A loopback HTTP server that records every request and connection. */
export interface Served {
  port: number;
  /** `http://127.0.0.1:<port><path>` */
  url(path: string): string;
  requests: SeenRequest[];
  connections: number;
  /** Resolves once every connection opened so far has closed. */
  allClosed(): Promise<void>;
}

export async function serve(
  t: Test,
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Served> {
  const sockets = new Set<Socket>();
  const closes: Promise<void>[] = [];
  const served: Served = {
    port: 0,
    url: (path) => `http://127.0.0.1:${served.port}${path}`,
    requests: [],
    connections: 0,
    allClosed: () => Promise.all(closes).then(() => {}),
  };
  const server = createServer((request, response) => {
    served.requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers });
    handler(request, response);
  });
  server.on('connection', (socket: Socket) => {
    served.connections++;
    sockets.add(socket);
    closes.push(new Promise((resolve) => socket.once('close', () => resolve())));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  served.port = (server.address() as { port: number }).port;
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return served;
}

/** A fetcher on a fake clock; private addresses are allowed unless the options say otherwise. */
export function fetcher(options: Partial<WebFetchOptions> = {}): { web: WebFetcher; clock: FakeClock } {
  const clock = fakeClock();
  const web = new WebFetcher({ clock, allowPrivateAddresses: true, ...options });
  return { web, clock };
}

export function fetchNow(web: WebFetcher, url: string): Promise<WebFetchOutcome> {
  return web.fetch(url, new AbortController().signal);
}

export interface FetchedPage {
  url: string;
  status: number;
  content_type: string;
  content: string;
  truncated: boolean;
}

/** The success's parsed output, or a failed assertion. */
export function page(t: Test, outcome: WebFetchOutcome): FetchedPage {
  t.equal(outcome.ok, true, 'the fetch succeeded');
  return outcome.ok ? (JSON.parse(outcome.output) as FetchedPage) : ({} as FetchedPage);
}

/** The outcome is this failure, with its fixed message. */
export function failed(t: Test, outcome: WebFetchOutcome, code: WebFetchError, message: string = code): void {
  t.same(outcome, { ok: false, code, message: WEB_FETCH_MESSAGES[code] }, message);
}
