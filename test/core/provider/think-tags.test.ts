import fc from 'fast-check';
import t from 'tap';
import { type ContentSegment, ThinkTagSplitter } from '../../../core/provider/think-tags.js';

function split(pieces: readonly string[]): ContentSegment[] {
  const splitter = new ThinkTagSplitter();
  return [...pieces.flatMap((piece) => splitter.push(piece)), ...splitter.flush()];
}

/** Adjacent segments of one kind merged, so that different cuts compare equal. */
function merged(segments: readonly ContentSegment[]): ContentSegment[] {
  const out: ContentSegment[] = [];
  for (const segment of segments) {
    const last = out[out.length - 1];
    if (last?.kind === segment.kind) last.text += segment.text;
    else out.push({ ...segment });
  }
  return out;
}

t.test('content without tags passes through unchanged, chunk by chunk', async (t) => {
  t.same(split(['Hello', ' world', '']), [
    { kind: 'text', text: 'Hello' },
    { kind: 'text', text: ' world' },
  ]);
});

t.test('a think section is reasoning and its tags are dropped', async (t) => {
  t.same(split(['<think>plan</think>Answer']), [
    { kind: 'reasoning', text: 'plan' },
    { kind: 'text', text: 'Answer' },
  ]);
});

t.test('tags cut across chunks are recognized; the possible start of a tag waits', async (t) => {
  const splitter = new ThinkTagSplitter();
  t.same(splitter.push('Hi <'), [{ kind: 'text', text: 'Hi ' }]);
  t.same(splitter.push('thi'), []);
  t.same(splitter.push('nk>pla'), [{ kind: 'reasoning', text: 'pla' }]);
  t.same(splitter.push('n</'), [{ kind: 'reasoning', text: 'n' }]);
  t.same(splitter.push('think'), []);
  t.same(splitter.push('>\n\nDone'), [{ kind: 'text', text: '\n\nDone' }]);
  t.same(splitter.flush(), []);
});

t.test('what looked like a tag but was not comes out as it was', async (t) => {
  t.same(merged(split(['a <th', 'is> b <', 'b>x</b>'])), [{ kind: 'text', text: 'a <this> b <b>x</b>' }]);
  t.same(split(['ends with <thi']), [
    { kind: 'text', text: 'ends with ' },
    { kind: 'text', text: '<thi' },
  ]);
  t.same(merged(split(['<think>never closed </thi'])), [{ kind: 'reasoning', text: 'never closed </thi' }]);
});

t.test('several sections in one chunk', async (t) => {
  t.same(split(['a<think>b</think>c<think>d</think>e']), [
    { kind: 'text', text: 'a' },
    { kind: 'reasoning', text: 'b' },
    { kind: 'text', text: 'c' },
    { kind: 'reasoning', text: 'd' },
    { kind: 'text', text: 'e' },
  ]);
});

t.test('any cut of a content stream gives the same text and reasoning', async () => {
  const piece = fc.constantFrom('<think>', '</think>', '<', '>', 't', 'think', 'é', '🙂', ' ', '</', 'x');
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 30 }),
      fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 10 }),
      (pieces, sizes) => {
        const content = pieces.join('');
        const whole = merged(split([content]));
        const cut: string[] = [];
        for (let at = 0, i = 0; at < content.length; i++) {
          const size = sizes[i % sizes.length]!;
          cut.push(content.slice(at, at + size));
          at += size;
        }
        const got = merged(split(cut));
        if (JSON.stringify(got) !== JSON.stringify(whole)) throw new Error('the cut changed the segments');
      },
    ),
  );
});
