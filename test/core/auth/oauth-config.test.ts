import t from 'tap';
import { DEFAULT_LOGIN_TIMEOUT_MS, readOAuthConfig } from '../../../core/auth/oauth-config.js';

t.test('an issuer is discovered; defaults fill the rest', async (t) => {
  const config = readOAuthConfig({ issuer: 'https://auth.example.com', client_id: 'magid' });
  t.equal(config.server.kind, 'discovery');
  t.equal(String(config.server.issuer), 'https://auth.example.com/');
  t.same(config.scopes, []);
  t.same(config.authorizationParameters, {});
  t.equal(config.loginTimeoutMs, DEFAULT_LOGIN_TIMEOUT_MS);
  t.equal(DEFAULT_LOGIN_TIMEOUT_MS, 300_000, 'five minutes');
});

t.test('explicit endpoints need both; the issuer defaults to the token endpoint origin', async (t) => {
  const config = readOAuthConfig({
    authorization_endpoint: 'https://auth.example.com/authorize',
    token_endpoint: 'https://tokens.example.com/oauth/token',
    client_id: 'magid',
    scopes: ['openid', 'offline_access'],
    authorization_parameters: { audience: 'api' },
    login_timeout_ms: 60_000,
  });
  t.equal(config.server.kind, 'explicit');
  if (config.server.kind === 'explicit') {
    t.equal(config.server.issuer, 'https://tokens.example.com');
    t.equal(config.server.tokenEndpoint.pathname, '/oauth/token');
  }
  t.same(config.scopes, ['openid', 'offline_access']);
  t.equal(config.loginTimeoutMs, 60_000);
  t.throws(() => readOAuthConfig({ authorization_endpoint: 'https://a.example/authorize', client_id: 'c' }), {
    pointer: '/provider/oauth',
  } as never);
  t.throws(() => readOAuthConfig({ client_id: 'c' }), { pointer: '/provider/oauth' } as never);
});

t.test('http only on loopback, no credentials in the URL, no flow parameter overridden', async (t) => {
  t.ok(readOAuthConfig({ issuer: 'http://127.0.0.1:8080', client_id: 'c' }));
  t.ok(readOAuthConfig({ issuer: 'http://localhost:8080', client_id: 'c' }));
  for (const issuer of ['http://auth.example.com', 'ftp://127.0.0.1', 'not a url', 'https://u:p@a.example']) {
    const error = t.throws(() => readOAuthConfig({ issuer, client_id: 'c' })) as Error;
    t.equal((error as { pointer?: string }).pointer, '/provider/oauth/issuer', issuer);
    t.notMatch(error.message, issuer, 'the value is never repeated');
  }
  for (const name of ['state', 'code_challenge', 'redirect_uri', 'code_challenge_method', 'client_id']) {
    t.throws(
      () =>
        readOAuthConfig({
          issuer: 'https://a.example',
          client_id: 'c',
          authorization_parameters: { [name]: 'x' },
        }),
      { pointer: '/provider/oauth/authorization_parameters' } as never,
      name,
    );
  }
});
