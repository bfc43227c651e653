import t from 'tap';
import { idLength, isWireId, newId, newSecret } from '../../core/ids.js';

t.test('ids are the prefix and 16 random bytes in base64url, valid wire ids', async (t) => {
  const id = newId('turn');
  t.match(id, /^turn_[A-Za-z0-9_-]{22}$/);
  t.ok(isWireId(id));
  t.equal(Buffer.from(id.slice('turn_'.length), 'base64url').length, 16);
  t.equal(idLength('turn'), 27);
  for (const prefix of ['turn', 'call', 'x']) {
    t.ok(
      Array.from({ length: 200 }, () => newId(prefix)).every((issued) => issued.length === idLength(prefix)),
      `every ${prefix} id takes idLength characters`,
    );
  }
});

t.test('ids never repeat, across many refills of their pool', async (t) => {
  const ids = Array.from({ length: 2_000 }, () => newId('x'));
  t.equal(new Set(ids).size, ids.length);
  const bodies = new Set(ids.map((id) => id.slice(2)));
  t.equal(bodies.size, ids.length, 'no two ids share their random part');
});

t.test('secrets are 32 random bytes in base64url', async (t) => {
  const secret = newSecret();
  t.match(secret, /^[A-Za-z0-9_-]{43}$/);
  t.not(secret, newSecret());
});
