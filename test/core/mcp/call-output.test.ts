import fc from 'fast-check';
import t from 'tap';
import { callOutput } from '../../../core/mcp/call-output.js';
import { MCP_LIMITS } from '../../../core/mcp/mcp-limits.js';

interface Output {
  content: string;
  is_error: boolean;
  truncated: boolean;
}

function parse(output: string): Output {
  return JSON.parse(output) as Output;
}

t.test('text parts are joined by newlines in compact JSON', async (t) => {
  t.equal(
    callOutput({
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two "quoted"' },
      ],
    }),
    '{"content":"one\\ntwo \\"quoted\\"","is_error":false,"truncated":false}',
  );
  t.equal(callOutput({ content: [] }), '{"content":"","is_error":false,"truncated":false}');
});

t.test('other parts are placeholders in their place, never their data', async (t) => {
  const output = callOutput({
    content: [
      { type: 'image', data: 'SECRETDATA' } as { type: string },
      { type: 'text', text: 'between' },
      { type: 'audio' },
      { type: 'resource' },
      { type: 'resource_link' },
      { type: 'hologram' },
    ],
    isError: true,
  });
  t.same(parse(output), {
    content: '[image]\nbetween\n[audio]\n[resource]\n[resource_link]\n[content]',
    is_error: true,
    truncated: false,
  });
  t.notOk(output.includes('SECRETDATA'));
});

t.test('an output that fits exactly is not cut', async (t) => {
  const frame = callOutput({ content: [{ type: 'text', text: '' }] }).length;
  const exact = callOutput({
    content: [{ type: 'text', text: 'x'.repeat(MCP_LIMITS.output_bytes - frame) }],
  });
  t.equal(exact.length, MCP_LIMITS.output_bytes);
  t.equal(parse(exact).truncated, false);
  const over = callOutput({
    content: [{ type: 'text', text: 'x'.repeat(MCP_LIMITS.output_bytes - frame + 1) }],
  });
  t.equal(parse(over).truncated, true);
  t.ok(over.length <= MCP_LIMITS.output_bytes);
});

t.test('a cut output keeps within the bound whatever the escaping, on a character boundary', async (t) => {
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 400 }), { maxLength: 8 }),
        fc.integer({ min: 60, max: 600 }),
        (texts, limit) => {
          const output = callOutput({ content: texts.map((text) => ({ type: 'text', text })) }, limit);
          if (Buffer.byteLength(output) > limit) return false;
          const parsed = parse(output);
          const whole = Buffer.from(texts.join('\n')).toString();
          return parsed.truncated ? whole.startsWith(parsed.content) : parsed.content === whole;
        },
      ),
    ),
  );
  const escapes = callOutput({ content: [{ type: 'text', text: '\u0001'.repeat(MCP_LIMITS.output_bytes) }] });
  t.ok(Buffer.byteLength(escapes) <= MCP_LIMITS.output_bytes, 'six bytes per character');
  t.ok(Buffer.byteLength(escapes) > MCP_LIMITS.output_bytes - 6);
  const wide = parse(callOutput({ content: [{ type: 'text', text: '😀'.repeat(10_000) }] }));
  t.match(wide.content, /^(😀)+$/u, 'no pair split');
});

t.test('at and one past the bound, for text that expands under escaping', async (t) => {
  const frame = callOutput({ content: [] }).length;
  const room = MCP_LIMITS.output_bytes - frame;
  for (const character of ['"', '\\', '\n', '\u0001', '\u001f', 'é', '€', '😀']) {
    const size = Buffer.byteLength(JSON.stringify(character)) - 2;
    const text = 'x'.repeat(room % size) + character.repeat(Math.floor(room / size));
    const label = JSON.stringify(character);
    const at = callOutput({ content: [{ type: 'text', text }] });
    t.equal(Buffer.byteLength(at), MCP_LIMITS.output_bytes, `${label}: the whole fills the bound exactly`);
    t.same(parse(at), { content: text, is_error: false, truncated: false }, `${label}: not cut`);
    const past = callOutput({ content: [{ type: 'text', text: text + character }] });
    const cut = parse(past);
    t.equal(cut.truncated, true, `${label}: one past is cut`);
    t.ok(Buffer.byteLength(past) <= MCP_LIMITS.output_bytes, `${label}: within the bound`);
    t.ok(Buffer.byteLength(past) > MCP_LIMITS.output_bytes - size, `${label}: filled up to one character`);
    t.ok(text.startsWith(cut.content), `${label}: a beginning of the text`);
  }
});
