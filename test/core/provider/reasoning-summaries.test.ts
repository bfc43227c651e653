import t from 'tap';
import { ReasoningSummaries } from '../../../core/provider/reasoning-summaries.js';

const summary = (text: string, index: number | undefined = 0) => ({
  type: 'reasoning.summary',
  summary: text,
  format: 'openai-responses-v1',
  ...(index === undefined ? {} : { index }),
});

t.test('fragments of one item are joined and handed out once the item is complete', async (t) => {
  const summaries = new ReasoningSummaries(1_000);
  t.same(summaries.push([summary('**Planning**')]), []);
  t.same(summaries.push([summary(' the answer')]), []);
  t.same(summaries.flush(), { text: '**Planning** the answer', redacted: false, truncated: false });
  t.equal(summaries.flush(), null, 'handed out once');
});

t.test('a new index completes the item before it; items without an index are one item', async (t) => {
  const summaries = new ReasoningSummaries(1_000);
  t.same(summaries.push([summary('first', 0), summary('second', 1)]), [
    { text: 'first', redacted: false, truncated: false },
  ]);
  t.same(summaries.flush(), { text: 'second', redacted: false, truncated: false });
  const unindexed = new ReasoningSummaries(1_000);
  unindexed.push([summary('a', undefined)]);
  unindexed.push([summary('b', undefined)]);
  t.same(unindexed.flush(), { text: 'ab', redacted: false, truncated: false });
});

t.test('only documented summary items count; reasoning text and odd shapes are not summaries', async (t) => {
  const summaries = new ReasoningSummaries(1_000);
  const ignored = [
    'not an array',
    null,
    [null, 7, 'text'],
    [{ type: 'reasoning.text', text: 'thinking out loud', index: 0 }],
    [{ type: 'reasoning.summary', text: 'wrong member', index: 0 }],
    [{ type: 'reasoning.summary', summary: 42, index: 0 }],
    [{ type: 'summary', summary: 'undocumented type', index: 0 }],
  ];
  for (const details of ignored) t.same(summaries.push(details), []);
  t.equal(summaries.flush(), null);
  summaries.push([summary('')]);
  t.equal(summaries.flush(), null, 'an empty summary is none');
});

t.test('withheld reasoning in the round marks the summary redacted', async (t) => {
  const summaries = new ReasoningSummaries(1_000);
  summaries.push([{ type: 'reasoning.encrypted', data: 'opaque', index: 0 }, summary('Shown part', 1)]);
  t.same(summaries.flush(), { text: 'Shown part', redacted: true, truncated: false });
});

t.test('a summary beyond the characters kept is cut, never inside a surrogate pair', async (t) => {
  const summaries = new ReasoningSummaries(5);
  summaries.push([summary('abcd')]);
  summaries.push([summary('🙂🙂')]);
  summaries.push([summary('more')]);
  t.same(summaries.flush(), { text: 'abcd', redacted: false, truncated: true });
  const exact = new ReasoningSummaries(6);
  exact.push([summary('abcd🙂x')]);
  t.same(exact.flush(), { text: 'abcd🙂', redacted: false, truncated: true });
});
