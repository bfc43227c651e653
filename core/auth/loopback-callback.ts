import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CALLBACK_PATH = '/callback';

/** What the browser shows once it has been sent back: fixed text, never anything of the request. */
const ANSWER = `<!doctype html><meta charset="utf-8"><title>magid</title><p>The sign-in has reached magid. You can close this window.</p>\n`;

/**
 * The redirect listener of one login (RFC 8252 section 7.3): HTTP on 127.0.0.1, an ephemeral port, one
 * path. A GET of the path hands its full URL to `onCallback`; everything else is a 404. It is open only
 * between `open()` and `close()`, which the flow calls at its end, whatever the end.
 */
export class LoopbackCallback {
  readonly #server: Server;
  #port = 0;

  private constructor(onCallback: (url: URL) => void) {
    this.#server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', `http://127.0.0.1:${this.#port}`);
      if (request.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        .end(ANSWER);
      onCallback(url);
    });
  }

  static async open(onCallback: (url: URL) => void): Promise<LoopbackCallback> {
    const callback = new LoopbackCallback(onCallback);
    await new Promise<void>((resolve, reject) => {
      callback.#server.once('error', reject);
      callback.#server.listen(0, '127.0.0.1', () => {
        callback.#server.off('error', reject);
        resolve();
      });
    });
    callback.#port = (callback.#server.address() as AddressInfo).port;
    return callback;
  }

  /** The address the authorization server redirects the browser to. */
  get redirectUri(): string {
    return `http://127.0.0.1:${this.#port}${CALLBACK_PATH}`;
  }

  get port(): number {
    return this.#port;
  }

  /** Stops listening and ends every connection the browser left open. */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    return closed;
  }
}
