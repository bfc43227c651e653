import { TextDecoder } from 'node:util';
import t from 'tap';
import { decodeBody, readBounded } from '../../../core/web/bounded-text.js';

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

t.test('a body within the limit is read whole, one at the limit too', async (t) => {
  t.same(await readBounded(chunks('ab', 'cd'), 10), { bytes: Buffer.from('abcd'), longer: false });
  t.same(await readBounded(chunks('ab', 'cd'), 4), { bytes: Buffer.from('abcd'), longer: false });
  t.same(await readBounded(chunks(), 4), { bytes: Buffer.alloc(0), longer: false });
});

t.test('a longer body is cut at the limit and nothing after the cut is read', async (t) => {
  let pulled = 0;
  async function* counted(): AsyncGenerator<Uint8Array> {
    for (const part of ['abc', 'def', 'ghi', 'jkl']) {
      pulled++;
      yield Buffer.from(part);
    }
  }
  t.same(await readBounded(counted(), 5), { bytes: Buffer.from('abcde'), longer: true });
  t.equal(pulled, 2, 'the chunks after the cut were not asked for');
  t.same(await readBounded(chunks('abcd', 'e'), 4), { bytes: Buffer.from('abcd'), longer: true });
});

t.test('a character split by the download cut is left out, one in a whole body is replaced', async (t) => {
  const split = Buffer.from('aé').subarray(0, 2);
  t.equal(decodeBody(new TextDecoder(), { bytes: split, longer: true }), 'a');
  t.equal(decodeBody(new TextDecoder(), { bytes: split, longer: false }), 'a\uFFFD');
});
