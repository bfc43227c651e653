import t from 'tap';
import { TITLE_LIMITS } from '../../../core/limits.js';
import { utf8ByteLength } from '../../../core/resources/unicode.js';
import { boundedTitle, TITLE_INSTRUCTION, titleMessages } from '../../../core/sessions/title-text.js';

t.test('the title is the first nonblank line, trimmed, spaces collapsed', async (t) => {
  t.equal(boundedTitle('  Tea   notes\t index  '), 'Tea notes index');
  t.equal(boundedTitle('\n\n  \r\nPlanning a trip\nand more lines'), 'Planning a trip');
  t.equal(boundedTitle('Control\u0007characters\u0000go'), 'Control characters go');
});

t.test('wrapping quotes, emphasis and a Title label are removed', async (t) => {
  t.equal(boundedTitle('"Tea notes"'), 'Tea notes');
  t.equal(boundedTitle('**Tea notes**'), 'Tea notes');
  t.equal(boundedTitle('Title: “Tea notes”'), 'Tea notes');
  t.equal(boundedTitle("Sam's notes"), "Sam's notes", 'quotes inside are kept');
});

t.test('a long title is cut between characters to its byte bound', async (t) => {
  const ascii = boundedTitle('x'.repeat(200));
  t.equal(ascii, 'x'.repeat(TITLE_LIMITS.title_bytes));
  const wide = boundedTitle('日'.repeat(40)) ?? '';
  t.equal(utf8ByteLength(wide), 78, 'whole three-byte characters only');
  t.equal(wide, '日'.repeat(26));
  const emoji = boundedTitle(`${'a'.repeat(78)}🙂b`) ?? '';
  t.equal(emoji, 'a'.repeat(78), 'never half of a surrogate pair');
  t.equal(boundedTitle(`${'a'.repeat(79)} bcd`), 'a'.repeat(79), 'trimmed after the cut');
});

t.test('an answer with nothing left is no title', async (t) => {
  for (const answer of ['', '   ', '\n\n', '""', 'Title:', '\u0000']) t.equal(boundedTitle(answer), null);
});

t.test('the request carries the fixed instruction and bounded excerpts of the exchange', async (t) => {
  t.match(TITLE_INSTRUCTION, /title/);
  const [message, ...rest] = titleMessages('Where is my tea note?', 'It is tea.md.');
  t.same(rest, []);
  t.same(message, { role: 'user', content: 'Request:\nWhere is my tea note?\n\nAnswer:\nIt is tea.md.' });
  const long = titleMessages('p'.repeat(10_000), 'é'.repeat(10_000))[0]!;
  const content = (long as { content: string }).content;
  t.equal(content, `Request:\n${'p'.repeat(2_000)}\n\nAnswer:\n${'é'.repeat(1_000)}`);
});
