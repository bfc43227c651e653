import { Type } from 'typebox';

/** Schema pieces of the `auth.*` methods. */
export const AuthReadiness = Type.Object({
  ready: Type.Boolean(),
  method: Type.Union([Type.Literal('env'), Type.Literal('stored'), Type.Literal('oauth'), Type.Null()]),
  /** Only when stored OAuth tokens cannot be used. */
  reason: Type.Optional(Type.Union([Type.Literal('refresh_failed'), Type.Literal('token_expired')])),
});

/** The acceptance of an OAuth login; its progress and outcome follow as `auth.login_progress` events. */
export const LoginStarted = Type.Object({ login_id: Type.String(), state: Type.Literal('started') });

/** How an OAuth login ended: its operation's settled result, and `auth.login_callback`'s answer. */
export const LoginEnded = Type.Object({
  login_id: Type.String(),
  state: Type.Union([
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
    Type.Literal('expired'),
  ]),
  /** The fixed failure code when `state` is `failed`, else null. */
  code: Type.Union([Type.String(), Type.Null()]),
});

/** A named provider, as `auth.login` and `auth.logout` take it; absent means the default provider. */
export const ProviderName = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$' });

/** `auth.status`: the default provider's readiness, and with named providers each one's. */
export const AuthStatus = Type.Object({
  ...AuthReadiness.properties,
  providers: Type.Optional(Type.Array(Type.Object({ name: Type.String(), ...AuthReadiness.properties }))),
});
