import t from 'tap';
import { OAuthClient, OAuthFailure } from '../../../core/auth/oauth-client.js';
import { readOAuthConfig } from '../../../core/auth/oauth-config.js';
import { systemClock } from '../../../core/clock.js';
import { authorize, startOAuthServer } from '../../helpers/oauth-server.js';

const REDIRECT = 'http://127.0.0.1:1/callback';

t.test('discovery, an S256 authorization URL, and the code exchange against a real server', async (t) => {
  const server = await startOAuthServer(t);
  const client = new OAuthClient(
    readOAuthConfig({
      issuer: server.issuer,
      client_id: 'magid-test',
      scopes: ['openid', 'offline_access'],
      authorization_parameters: { audience: 'models' },
    }),
    systemClock,
  );
  const signal = new AbortController().signal;
  const request = await client.authorizationRequest(REDIRECT, signal);
  const query = request.url.searchParams;
  t.equal(request.url.origin, server.issuer);
  t.equal(query.get('response_type'), 'code');
  t.equal(query.get('client_id'), 'magid-test');
  t.equal(query.get('redirect_uri'), REDIRECT);
  t.equal(query.get('scope'), 'openid offline_access');
  t.equal(query.get('audience'), 'models');
  t.equal(query.get('code_challenge_method'), 'S256');
  t.equal(query.get('state'), request.state);
  t.not(query.get('code_challenge'), request.verifier, 'the verifier never leaves');
  t.notMatch(request.url.href, request.verifier);

  const callback = new URL(await authorize(request.url.href));
  const parameters = client.callbackParameters(request, callback);
  const before = Date.now();
  const tokens = await client.exchange(request, parameters, signal);
  t.type(tokens.accessToken, 'string');
  t.type(tokens.refreshToken, 'string');
  t.ok(tokens.expiresAt! >= before + 3_500_000, 'the expiry is stored as wall time');
  const exchange = server.tokenRequests[0]!;
  t.equal(exchange.grant_type, 'authorization_code');
  t.equal(exchange.body.code_verifier, request.verifier, 'the server checked the PKCE verifier');

  const refreshed = await client.refresh(tokens.refreshToken!, signal);
  t.not(refreshed.accessToken, '', 'a fresh access token');
  t.equal(server.tokenRequests[1]!.grant_type, 'refresh_token');
  t.equal(server.tokenRequests[1]!.body.refresh_token, tokens.refreshToken);
});

t.test('explicit endpoints need no discovery', async (t) => {
  const server = await startOAuthServer(t);
  const client = new OAuthClient(
    readOAuthConfig({
      authorization_endpoint: `${server.issuer}/authorize`,
      token_endpoint: `${server.issuer}/token`,
      client_id: 'magid-test',
    }),
    systemClock,
  );
  const signal = new AbortController().signal;
  const request = await client.authorizationRequest(REDIRECT, signal);
  t.equal(request.url.pathname, '/authorize');
  t.notOk(request.url.searchParams.has('scope'), 'no scope when none is configured');
  const callback = new URL(await authorize(request.url.href));
  const tokens = await client.exchange(request, client.callbackParameters(request, callback), signal);
  t.type(tokens.accessToken, 'string');
});

t.test(
  'a wrong state, an error redirect, a foreign redirect and a refused code have fixed codes',
  async (t) => {
    const server = await startOAuthServer(t);
    const client = new OAuthClient(readOAuthConfig({ issuer: server.issuer, client_id: 'c' }), systemClock);
    const signal = new AbortController().signal;
    const request = await client.authorizationRequest(REDIRECT, signal);
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        t.ok(error instanceof OAuthFailure);
        return (error as OAuthFailure).code;
      }
      return null;
    };
    t.equal(
      codeOf(() => client.callbackParameters(request, new URL(`${REDIRECT}?code=x&state=other`))),
      'state_mismatch',
    );
    t.equal(
      codeOf(() => client.callbackParameters(request, new URL(`${REDIRECT}?code=x`))),
      'state_mismatch',
    );
    t.equal(
      codeOf(() =>
        client.callbackParameters(request, new URL(`${REDIRECT}?error=access_denied&state=${request.state}`)),
      ),
      'authorization_denied',
    );
    t.equal(
      codeOf(() =>
        client.callbackParameters(
          request,
          new URL(`http://127.0.0.1:2/elsewhere?code=x&state=${request.state}`),
        ),
      ),
      'invalid_callback',
    );
    const callback = new URL(await authorize(request.url.href));
    server.failTokens = 400;
    const failure = await client
      .exchange(request, client.callbackParameters(request, callback), signal)
      .catch((e) => e);
    t.ok(failure instanceof OAuthFailure);
    t.equal(failure.code, 'exchange_failed');
    t.notMatch(failure.message, 'server-secret-description', "the server's words never pass");
    const refresh = await client.refresh('r', signal).catch((e) => e);
    t.equal(refresh.code, 'refresh_failed');
  },
);

t.test('an unreachable issuer and an aborted request', async (t) => {
  const server = await startOAuthServer(t);
  const gone = server.issuer;
  await server.server.stop();
  const client = new OAuthClient(readOAuthConfig({ issuer: gone, client_id: 'c' }), systemClock);
  const failure = await client.authorizationRequest(REDIRECT, new AbortController().signal).catch((e) => e);
  t.equal(failure.code, 'server_unreachable');
  const abort = new AbortController();
  const reason = new Error('cancelled by the test');
  abort.abort(reason);
  t.equal(await client.authorizationRequest(REDIRECT, abort.signal).catch((e) => e), reason);
});
