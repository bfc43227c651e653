import t from 'tap';
import { WireError } from '../../../core/errors.js';
import {
  CAPTURED_SOURCE_REFUSALS,
  parseSkillText,
  sourceMaxBytes,
  validateCapturedSource,
} from '../../../core/resources/captured-source.js';
import type { ResourceKind } from '../../../core/resources/names.js';
import { TOOL_CONTRACT_REFUSALS } from '../../../core/resources/tool-contract.js';

const CONTRACT = JSON.stringify({
  input_schema: { type: 'object', additionalProperties: false },
  output_schema: { type: 'object', additionalProperties: false },
});

function refusalOf(kind: ResourceKind, captured: Uint8Array): { code: string; message: string } | 'accepted' {
  try {
    validateCapturedSource(kind, captured);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    return error.toJSON();
  }
}

function invalid(message: string) {
  return { code: 'invalid_payload', message };
}

t.test('per-source maxima: 32 KiB for a tool, 16 KiB for a skill', async (t) => {
  t.equal(sourceMaxBytes('tool'), 32_768);
  t.equal(sourceMaxBytes('skill'), 16_384);
});

t.test('a tool source becomes its frozen contract', async (t) => {
  const captured = validateCapturedSource('tool', Buffer.from(CONTRACT));
  t.equal(captured.kind, 'tool');
  t.ok(Object.isFrozen(captured));
  t.equal(captured.kind === 'tool' && captured.contract.timeout_ms, 120_000);
  t.equal(refusalOf('tool', new TextEncoder().encode(CONTRACT)), 'accepted', 'a plain Uint8Array');
});

t.test('a tool source over 32 KiB is refused as content, whatever it holds', async (t) => {
  const padded = (bytes: number) => Buffer.from(CONTRACT + ' '.repeat(bytes - CONTRACT.length));
  t.equal(refusalOf('tool', padded(32_768)), 'accepted');
  t.same(refusalOf('tool', padded(32_769)), invalid(CAPTURED_SOURCE_REFUSALS.too_large));
});

t.test('tool content refusals come from the contract rules', async (t) => {
  t.same(refusalOf('tool', Buffer.from('{}')), invalid(TOOL_CONTRACT_REFUSALS.missing_schema));
  t.same(refusalOf('tool', Buffer.from([0xff])), invalid(TOOL_CONTRACT_REFUSALS.not_utf8));
  t.same(refusalOf('tool', Buffer.from('')), invalid(TOOL_CONTRACT_REFUSALS.syntax));
});

t.test('a skill source is its exact UTF-8 text', async (t) => {
  const text = 'Réponds en français.\n\n  Keep whitespace.  \r\n';
  t.same(validateCapturedSource('skill', Buffer.from(text)), { kind: 'skill', instructions: text });
  t.equal(parseSkillText(Buffer.from([0xef, 0xbb, 0xbf, 0x61])), '\ufeffa', 'a byte order mark is kept');
  t.equal(parseSkillText(Buffer.from('   ')), '   ', 'whitespace-only text is kept as is');
  t.equal(parseSkillText(Buffer.from('{"not":"parsed"}')), '{"not":"parsed"}', 'no includes or parsing');
});

t.test('skill text refusals', async (t) => {
  t.same(refusalOf('skill', Buffer.from('')), invalid(CAPTURED_SOURCE_REFUSALS.skill_empty));
  t.same(refusalOf('skill', Buffer.from('a\u0000b')), invalid(CAPTURED_SOURCE_REFUSALS.skill_nul));
  t.same(refusalOf('skill', Buffer.from([0x61, 0xc3])), invalid(CAPTURED_SOURCE_REFUSALS.skill_not_utf8));
  t.same(
    refusalOf('skill', Buffer.from([0xed, 0xa0, 0x80])),
    invalid(CAPTURED_SOURCE_REFUSALS.skill_not_utf8),
  );
  t.equal(refusalOf('skill', Buffer.alloc(16_384, 'x')), 'accepted');
  t.same(refusalOf('skill', Buffer.alloc(16_385, 'x')), invalid(CAPTURED_SOURCE_REFUSALS.too_large));
});
