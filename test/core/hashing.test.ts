import t from 'tap';
import { matchesVerifier, sha256Hex, verifierOf } from '../../core/hashing.js';

t.test('sha256Hex is the lowercase hex digest', async (t) => {
  t.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

t.test('a verifier accepts exactly its secret', async (t) => {
  const verifier = verifierOf('s3cret');
  t.ok(matchesVerifier('s3cret', verifier));
  t.notOk(matchesVerifier('s3creT', verifier));
  t.notOk(matchesVerifier(undefined, verifier));
  t.notOk(matchesVerifier(42, verifier));
});
