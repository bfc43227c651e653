import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface PostResponse {
  status: number;
  /** The response's headers, read only when the status is an error (for retry hints). */
  headers(): Headers;
  /**
   * The body as it arrives; iterating throws when the connection breaks or the request is aborted. Leaving
   * the loop early does not end the response: `finish` does.
   */
  body: AsyncIterable<Uint8Array>;
  /**
   * The caller has read what it wanted: an answer already received whole is drained, so its connection
   * serves the next request; one still arriving is cut.
   */
  finish(): void;
}

/**
 * POSTs over `node:http` or `node:https` with keep-alive connections, reading the answer as a stream of
 * bytes. It follows no redirect (a 3xx is a status like any other). Rejects when no response comes: the
 * connection failed, the headers were refused, or `signal` aborted first.
 */
export class HttpPoster {
  readonly #agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

  post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<PostResponse> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const send = secure ? httpsRequest : httpRequest;
      const request = send(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          agent: secure ? this.#agents.https : this.#agents.http,
          signal,
        },
        (response: IncomingMessage) => {
          // A reader iterating the body sees its errors; one that has left the loop has no use for them.
          response.on('error', () => {});
          resolve({
            status: response.statusCode ?? 0,
            headers: () => headersOf(response),
            body: response.iterator({ destroyOnReturn: false }),
            finish: () => (response.complete ? response.resume() : response.destroy()),
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }
}

function headersOf(response: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}
