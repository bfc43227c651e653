import t from 'tap';
import {
  cutUtf8,
  decodeUtf8Exact,
  encodeUtf8Exact,
  isWellFormedText,
  scalarCount,
  utf8ByteLength,
} from '../../../core/resources/unicode.js';

t.test('well-formed text has no lone surrogate', async (t) => {
  for (const text of ['', 'abc', 'é', '🙂', 'a🙂b🙂']) t.ok(isWellFormedText(text), text);
  for (const text of ['\ud800', '\udc00', 'a\ud83d', '\ude42a', '\ude42\ud83d', '🙂\ud800']) {
    t.notOk(isWellFormedText(text), JSON.stringify(text));
  }
});

t.test('lengths in UTF-8 bytes and in Unicode scalars', async (t) => {
  t.equal(utf8ByteLength('aé日🙂'), 1 + 2 + 3 + 4);
  t.equal(scalarCount('aé日🙂'), 4);
  t.equal(scalarCount('e\u0301'), 2);
  t.equal(scalarCount(''), 0);
});

t.test('exact UTF-8 decoding keeps a byte order mark and refuses malformed bytes', async (t) => {
  t.equal(decodeUtf8Exact(Buffer.from('aé日🙂')), 'aé日🙂');
  t.equal(decodeUtf8Exact(Buffer.from([0xef, 0xbb, 0xbf, 0x61])), '\ufeffa');
  t.equal(decodeUtf8Exact(Buffer.from([0xff])), null);
  t.equal(decodeUtf8Exact(Buffer.from([0xc0, 0xaf])), null, 'overlong');
  t.equal(decodeUtf8Exact(Buffer.from([0xed, 0xa0, 0x80])), null, 'encoded surrogate');
  t.equal(decodeUtf8Exact(Buffer.from([0xf4, 0x90, 0x80, 0x80])), null, 'beyond U+10FFFF');
  t.equal(decodeUtf8Exact(Buffer.from([0xe6, 0x97])), null, 'truncated');
});

t.test('exact UTF-8 encoding refuses a lone surrogate instead of substituting U+FFFD', async (t) => {
  t.equal(encodeUtf8Exact('é🙂').toString('hex'), 'c3a9f09f9982');
  t.throws(() => encodeUtf8Exact('a\ud800'), TypeError);
});

t.test('a UTF-8 cut keeps whole characters within the bound', async (t) => {
  t.equal(cutUtf8('abc', 3), 'abc', 'text within the bound is kept whole');
  t.equal(cutUtf8('abcd', 3), 'abc');
  t.equal(cutUtf8('aé', 2), 'a', 'never half of a two-byte character');
  t.equal(cutUtf8('a日', 3), 'a', 'never part of a three-byte character');
  t.equal(cutUtf8('ab🙂', 5), 'ab', 'never half of a surrogate pair');
  t.equal(cutUtf8('ab🙂', 6), 'ab🙂');
  t.equal(cutUtf8('🙂', 0), '');
});
