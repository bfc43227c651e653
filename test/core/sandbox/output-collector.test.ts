import t from 'tap';
import {
  completeLength,
  OutputCollector,
  type OutputStream,
} from '../../../core/sandbox/output-collector.js';

function collect(limit: number, ...chunks: Array<[OutputStream, string | Buffer]>) {
  const collector = new OutputCollector(limit);
  for (const [stream, chunk] of chunks) {
    collector.add(stream, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, 'utf8'));
  }
  return collector.result();
}

const out = (chunk: string | Buffer): [OutputStream, string | Buffer] => ['stdout', chunk];
const err = (chunk: string | Buffer): [OutputStream, string | Buffer] => ['stderr', chunk];

t.test('output within the bound is kept whole, both streams in the order they arrived', async (t) => {
  t.same(collect(16, out('out '), err('err '), out('out')), {
    output: 'out err out',
    truncated: false,
    stdoutBytes: 7,
    stderrBytes: 4,
  });
  t.same(
    collect(4, out('ab'), err('cd')),
    { output: 'abcd', truncated: false, stdoutBytes: 2, stderrBytes: 2 },
    'exactly the bound',
  );
  t.same(collect(4), { output: '', truncated: false, stdoutBytes: 0, stderrBytes: 0 });
  t.same(collect(4, err('')), { output: '', truncated: false, stdoutBytes: 0, stderrBytes: 0 });
});

t.test('output over the bound keeps its first bytes and counts each stream whole', async (t) => {
  t.same(
    collect(4, out('ab'), err('cde')),
    { output: 'abcd', truncated: true, stdoutBytes: 2, stderrBytes: 3 },
    'one byte past the bound',
  );
  t.same(collect(5, out('abc'), err('defg'), out('hij')), {
    output: 'abcde',
    truncated: true,
    stdoutBytes: 6,
    stderrBytes: 4,
  });
  t.same(collect(3, out(Buffer.alloc(1_000_000, 'x')), err(Buffer.alloc(2_000_000, 'y'))), {
    output: 'xxx',
    truncated: true,
    stdoutBytes: 1_000_000,
    stderrBytes: 2_000_000,
  });
  t.same(
    collect(3, err('abc'), out('def')),
    { output: 'abc', truncated: true, stdoutBytes: 3, stderrBytes: 3 },
    'a stream that arrives after the bound is full is only counted',
  );
});

t.test('a cut never splits a character', async (t) => {
  // 'é' is 2 bytes, '€' 3, '😀' 4; each bound lands inside one of them.
  t.same(collect(2, out('aé')), { output: 'a', truncated: true, stdoutBytes: 3, stderrBytes: 0 });
  t.same(collect(3, out('a€')), { output: 'a', truncated: true, stdoutBytes: 4, stderrBytes: 0 });
  t.same(collect(2, err('a😀')), { output: 'a', truncated: true, stdoutBytes: 0, stderrBytes: 5 });
  t.same(collect(4, out('a😀')), { output: 'a', truncated: true, stdoutBytes: 5, stderrBytes: 0 });
  t.same(collect(5, out('a😀b')), { output: 'a😀', truncated: true, stdoutBytes: 6, stderrBytes: 0 });
  t.same(
    collect(3, out('é'), err('é')),
    { output: 'é', truncated: true, stdoutBytes: 2, stderrBytes: 2 },
    'across chunks of both streams',
  );
});

t.test('bytes that are not UTF-8 never make the text outgrow the bound', async (t) => {
  const invalid = collect(4, out(Buffer.from([0xff, 0xfe, 0x41, 0x42])));
  t.ok(Buffer.byteLength(invalid.output) <= 4, 'within the bound once encoded');
  t.equal(invalid.output, '\ufffd', 'each invalid byte decodes to U+FFFD; the rest is cut');
  t.equal(invalid.truncated, true);
  t.equal(invalid.stdoutBytes, 4);
  t.same(collect(8, err(Buffer.from([0x41, 0xff]))), {
    output: 'A\ufffd',
    truncated: false,
    stdoutBytes: 0,
    stderrBytes: 2,
  });
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
