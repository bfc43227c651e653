import fc from 'fast-check';
import t from 'tap';
import { LineSplitter } from '../../../core/wire/line-splitter.js';

const text = (lines: ReturnType<LineSplitter['push']>) =>
  lines.map((line) => (line.kind === 'line' ? line.bytes.toString() : '<oversized>'));

t.test('splits on newlines across chunks and skips blank lines', async (t) => {
  const splitter = new LineSplitter(100);
  t.same(text(splitter.push(Buffer.from('ab'))), []);
  t.same(text(splitter.push(Buffer.from('c\n\n  \r\nde\nf'))), ['abc', 'de']);
  t.equal(splitter.pendingBytes, 1);
  t.same(text(splitter.push(Buffer.from('\n'))), ['f']);
});

t.test('a line over the limit is reported once at its newline and never held', async (t) => {
  const splitter = new LineSplitter(10);
  t.same(text(splitter.push(Buffer.from('0123456789'))), []);
  t.same(text(splitter.push(Buffer.from('x'.repeat(1000)))), []);
  t.equal(splitter.pendingBytes, 0, 'the oversized line is dropped as it arrives');
  t.same(text(splitter.push(Buffer.from('yy\nok\n'))), ['<oversized>', 'ok']);
  t.same(text(splitter.push(Buffer.from('0123456789\n'))), ['0123456789'], 'exactly the limit is a line');
});

t.test('any chunking of a stream gives the same lines', async () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n'), maxLength: 40 }), { maxLength: 10 }),
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }),
      (parts, cuts) => {
        const stream = Buffer.from(parts.join(''));
        const whole = text(new LineSplitter(15).push(stream));
        const splitter = new LineSplitter(15);
        const pieces: string[] = [];
        let offset = 0;
        let i = 0;
        while (offset < stream.length) {
          const size = cuts[i++ % cuts.length]!;
          pieces.push(...text(splitter.push(stream.subarray(offset, offset + size))));
          offset += size;
        }
        if (JSON.stringify(pieces) !== JSON.stringify(whole)) throw new Error('chunking changed the lines');
      },
    ),
  );
});
