import t from 'tap';
import { TURN_LIMITS } from '../../../core/limits.js';
import { utf8ByteLength } from '../../../core/resources/unicode.js';
import { summaryActivity } from '../../../core/turns/summary-activity.js';

const plain = { redacted: false, truncated: false };

t.test('a summary within its bound is shown as it is', async (t) => {
  t.same(summaryActivity({ text: '**Planning** the answer', ...plain }), {
    kind: 'reasoning_summary',
    text: '**Planning** the answer',
    truncated: false,
    redacted: false,
  });
});

t.test('the text is cut between characters to its UTF-8 bound and marked truncated', async (t) => {
  const bound = TURN_LIMITS.reasoning_summary_bytes;
  const exact = summaryActivity({ text: 'a'.repeat(bound), ...plain });
  t.match(exact, { truncated: false });
  const wide = summaryActivity({ text: `a${'日'.repeat(bound)}`, ...plain });
  t.equal(wide.truncated, true);
  t.equal(utf8ByteLength(wide.text as string), bound, '1 + 3n bytes: whole characters up to the bound');
  const emoji = summaryActivity({ text: `${'a'.repeat(bound - 2)}🙂`, ...plain });
  t.equal(emoji.text, 'a'.repeat(bound - 2), 'never half of a four-byte character');
  t.equal(emoji.truncated, true);
  t.match(summaryActivity({ text: 'short', redacted: false, truncated: true }), {
    text: 'short',
    truncated: true,
  });
});

t.test(
  'credential-looking text is removed and marked redacted; so is what the provider withheld',
  async (t) => {
    t.same(summaryActivity({ text: 'Found sk-abcdefghijklmnopqrst in the notes', ...plain }), {
      kind: 'reasoning_summary',
      text: 'Found [redacted] in the notes',
      truncated: false,
      redacted: true,
    });
    t.match(summaryActivity({ text: 'Nothing secret', redacted: true, truncated: false }), {
      text: 'Nothing secret',
      redacted: true,
    });
  },
);
