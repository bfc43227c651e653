import t from 'tap';
import { MCP_SUPERVISION } from '../../../core/mcp/mcp-limits.js';
import { StderrTail } from '../../../core/mcp/stderr-tail.js';

const KiB = 1024;
const unchanged = (line: string) => line;

t.test('the last lines are kept, blank ones left out, at most twenty', async (t) => {
  const tail = new StderrTail(unchanged);
  tail.append(Buffer.from('one\r\n\ntwo\n   \nthree\rfour'));
  t.same(tail.lines(), ['one', 'two', 'three', 'four']);
  const many = new StderrTail(unchanged);
  for (let i = 1; i <= 30; i++) many.append(Buffer.from(`line ${i}\n`));
  t.equal(MCP_SUPERVISION.stderr_log_lines, 20);
  t.same(
    many.lines(),
    Array.from({ length: 20 }, (_, i) => `line ${i + 11}`),
  );
});

t.test('at most 8 KiB is kept; a line cut at the front is left out', async (t) => {
  t.equal(MCP_SUPERVISION.stderr_bytes, 8 * KiB);
  const exact = new StderrTail(unchanged);
  exact.append(Buffer.from(`${'a'.repeat(8 * KiB - 5)}\nend\n`));
  t.same(exact.lines(), ['a'.repeat(8 * KiB - 5), 'end'], 'at the bound: all of it');
  const over = new StderrTail(unchanged);
  over.append(Buffer.from(`b${'a'.repeat(8 * KiB - 5)}\nend\n`));
  t.same(over.lines(), ['end'], 'one byte past: the cut line is dropped');
  const flood = new StderrTail(unchanged);
  for (let i = 0; i < 1_000; i++) flood.append(Buffer.from(`${'x'.repeat(99)}\n`));
  flood.append(Buffer.from('why it stopped\n'));
  t.equal(flood.lines().at(-1), 'why it stopped');
  const huge = new StderrTail(unchanged);
  huge.append(Buffer.from(`${'y'.repeat(100 * KiB)}\nlast\n`));
  t.same(huge.lines(), ['last'], 'one chunk larger than the bound');
  const wide = new StderrTail(unchanged);
  wide.append(Buffer.from(`${'é'.repeat(5 * KiB)}\nlast é\n`));
  t.same(wide.lines(), ['last é'], 'a character cut in half is dropped with its line');
});

t.test('each line is redacted as it is read', async (t) => {
  const tail = new StderrTail((line) => line.replace('ntn_secret_4411', '[redacted]'));
  tail.append(Buffer.from('token ntn_secret_4411 refused\nfine\n'));
  t.same(tail.lines(), ['token [redacted] refused', 'fine']);
});
