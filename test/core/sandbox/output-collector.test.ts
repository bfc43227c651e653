import t from 'tap';
import { completeLength, OutputCollector } from '../../../core/sandbox/output-collector.js';

function collect(limit: number, ...chunks: (string | Buffer)[]) {
  const collector = new OutputCollector(limit);
  for (const chunk of chunks) collector.add(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, 'utf8'));
  return collector.result();
}

t.test('output within the bound is kept whole, in the order it arrived', async (t) => {
  t.same(collect(16, 'out ', 'err ', 'out'), { output: 'out err out', truncated: false, outputBytes: 11 });
  t.same(collect(4, 'ab', 'cd'), { output: 'abcd', truncated: false, outputBytes: 4 }, 'exactly the bound');
  t.same(collect(4), { output: '', truncated: false, outputBytes: 0 });
});

t.test('output over the bound keeps its first bytes and counts the rest', async (t) => {
  t.same(collect(5, 'abc', 'defg', 'hij'), { output: 'abcde', truncated: true, outputBytes: 10 });
  const big = collect(3, Buffer.alloc(1_000_000, 'x'), Buffer.alloc(1_000_000, 'y'));
  t.same(big, { output: 'xxx', truncated: true, outputBytes: 2_000_000 });
});

t.test('a cut never splits a character', async (t) => {
  // 'é' is 2 bytes, '€' 3, '😀' 4; each bound lands inside one of them.
  t.same(collect(2, 'aé'), { output: 'a', truncated: true, outputBytes: 3 });
  t.same(collect(3, 'a€'), { output: 'a', truncated: true, outputBytes: 4 });
  t.same(collect(2, 'a😀'), { output: 'a', truncated: true, outputBytes: 5 });
  t.same(collect(4, 'a😀'), { output: 'a', truncated: true, outputBytes: 5 });
  t.same(collect(5, 'a😀b'), { output: 'a😀', truncated: true, outputBytes: 6 });
  t.same(collect(3, 'é', 'é'), { output: 'é', truncated: true, outputBytes: 4 }, 'across chunks');
});

t.test('bytes that are not UTF-8 never make the text outgrow the bound', async (t) => {
  const invalid = collect(4, Buffer.from([0xff, 0xfe, 0x41, 0x42]));
  t.ok(Buffer.byteLength(invalid.output) <= 4, 'within the bound once encoded');
  t.equal(invalid.output, '\ufffd', 'each invalid byte decodes to U+FFFD; the rest is cut');
  t.equal(invalid.truncated, true);
  t.equal(invalid.outputBytes, 4);
  t.same(collect(8, Buffer.from([0x41, 0xff])), { output: 'A\ufffd', truncated: false, outputBytes: 2 });
});

t.test('completeLength drops only an incomplete final sequence', async (t) => {
  t.equal(completeLength(Buffer.from('abc')), 3);
  t.equal(completeLength(Buffer.from([])), 0);
  t.equal(completeLength(Buffer.from([0x61, 0xc3])), 1);
  t.equal(completeLength(Buffer.from([0x61, 0xc3, 0xa9])), 3);
  t.equal(completeLength(Buffer.from([0xf0, 0x9f, 0x98])), 0);
  t.equal(completeLength(Buffer.from([0xf0, 0x9f, 0x98, 0x80])), 4);
  t.equal(completeLength(Buffer.from([0x80, 0x80, 0x80, 0x80])), 4, 'stray continuation bytes stay');
  t.equal(completeLength(Buffer.from([0x61, 0xff])), 2, 'an invalid lead byte stays');
});
