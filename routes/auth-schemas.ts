import { Type } from 'typebox';

/** Schema pieces of the `auth.*` methods. */
export const AuthReadiness = Type.Object({
  ready: Type.Boolean(),
  method: Type.Union([Type.Literal('env'), Type.Literal('stored'), Type.Null()]),
});
