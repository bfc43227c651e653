import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Server } from 'oauth2-mock-server';

interface Tap {
  teardown(fn: () => unknown): void;
}

/** A token request the server received, with the grant it asked for. */
export interface TokenRequestSeen {
  grant_type: string;
  body: Record<string, string>;
}

/** A real OAuth 2.0 authorization server (oauth2-mock-server) on loopback, stopped with the test. */
export interface TestOAuthServer {
  server: OAuth2Server;
  /** The issuer URL, e.g. `http://127.0.0.1:43121`. */
  issuer: string;
  tokenRequests: TokenRequestSeen[];
  /** Seconds the next token answers say the access token lives (default the server's, an hour). */
  expiresIn: number | null;
  /** When set, the next token answers are this error status. */
  failTokens: number | null;
}

export async function startOAuthServer(t: Tap): Promise<TestOAuthServer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const fixture: TestOAuthServer = {
    server,
    issuer: server.issuer.url!,
    tokenRequests: [],
    expiresIn: null,
    failTokens: null,
  };
  // Every token is distinct, even two signed in the same second.
  server.service.on('beforeTokenSigning', (token) => {
    token.payload.jti = randomUUID();
  });
  server.service.on('beforeResponse', (response, request) => {
    const body = (request as unknown as { body: Record<string, string> }).body;
    fixture.tokenRequests.push({ grant_type: body.grant_type ?? '', body });
    if (fixture.expiresIn !== null) (response.body as Record<string, unknown>).expires_in = fixture.expiresIn;
    if (fixture.failTokens !== null) {
      response.statusCode = fixture.failTokens;
      response.body = { error: 'invalid_grant', error_description: 'the server-secret-description' };
    }
  });
  t.teardown(() => (server.listening ? server.stop() : undefined));
  return fixture;
}

/**
 * What a browser does with an authorization URL: asks the server, which signs the user in at once and
 * redirects; returns where it redirects to, without following.
 */
export async function authorize(authorizationUrl: string): Promise<string> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (response.status !== 302 || location === null) throw new Error(`no redirect (${response.status})`);
  return location;
}

/**
 * An issuer whose discovery never answers: a login against it stays before its URL until cancelled.
 * `asked` resolves once the daemon's discovery request has arrived.
 */
export async function startSilentIssuer(t: Tap): Promise<{ issuer: string; asked: Promise<void> }> {
  let arrived: () => void = () => {};
  const asked = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer(() => arrived());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}
