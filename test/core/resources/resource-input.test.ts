import t from 'tap';
import { WireError } from '../../../core/errors.js';
import { CAPTURED_SOURCE_REFUSALS } from '../../../core/resources/captured-source.js';
import {
  isValidSourcePath,
  parseResourceInput,
  RESOURCE_INPUT_REFUSALS,
} from '../../../core/resources/resource-input.js';

const SKILL = {
  kind: 'skill',
  name: 'tone',
  description: 'Be brief',
  source: { kind: 'inline', content: 'Answer in one sentence.' },
};

function refusalOf(value: unknown): { code: string; message: string } | 'accepted' {
  try {
    parseResourceInput(value);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    return error.toJSON();
  }
}

function invalid(message: string) {
  return { code: 'invalid_payload', message };
}

t.test('accepts the four-member shape with either source kind, as a frozen copy', async (t) => {
  const skill = parseResourceInput(SKILL);
  t.strictSame(skill, SKILL);
  t.not(skill, SKILL);
  t.ok(Object.isFrozen(skill));
  t.ok(Object.isFrozen(skill.source));
  const tool = { ...SKILL, kind: 'tool', source: { kind: 'workspace_file', path: 'tools/lookup.json' } };
  t.strictSame(parseResourceInput(tool), tool);
  t.equal(refusalOf({ ...SKILL, description: '' }), 'accepted', 'an empty description');
  t.equal(
    refusalOf({ ...SKILL, name: 'read_file' }),
    'accepted',
    'reservation is the catalog rule, not a shape rule',
  );
});

t.test('anything but exactly {kind, name, description, source} is refused', async (t) => {
  const shape = invalid(RESOURCE_INPUT_REFUSALS.shape);
  for (const value of [null, undefined, 'x', 1, [], [SKILL]])
    t.same(refusalOf(value), shape, JSON.stringify(value));
  const { source: _source, ...withoutSource } = SKILL;
  const { description: _description, ...withoutDescription } = SKILL;
  t.same(refusalOf(withoutSource), shape);
  t.same(refusalOf(withoutDescription), shape);
  t.same(refusalOf({ ...SKILL, expected_revision: null }), shape);
  t.same(refusalOf({ ...SKILL, path: 'x' }), shape);
  t.same(refusalOf({}), shape);
});

t.test('legacy contract/content registration shapes are refused', async (t) => {
  const legacy = invalid(RESOURCE_INPUT_REFUSALS.legacy_shape);
  const { source: _source, ...metadata } = SKILL;
  t.same(refusalOf({ ...metadata, content: 'Answer in one sentence.' }), legacy);
  t.same(refusalOf({ ...metadata, kind: 'tool', contract: { input_schema: {}, output_schema: {} } }), legacy);
  t.same(refusalOf({ ...SKILL, content: 'x' }), legacy, 'even alongside a source');
  t.same(refusalOf({ contract: {} }), legacy);
});

t.test('kind is "tool" or "skill"', async (t) => {
  for (const kind of ['Tool', 'SKILL', 'mcp', '', null, 1]) {
    t.same(refusalOf({ ...SKILL, kind }), invalid(RESOURCE_INPUT_REFUSALS.kind), JSON.stringify(kind));
  }
});

t.test('name and description follow their rules', async (t) => {
  for (const name of ['', 'Tone', '1tone', 'to-ne', `t${'x'.repeat(48)}`, null]) {
    t.same(refusalOf({ ...SKILL, name }), invalid(RESOURCE_INPUT_REFUSALS.name), JSON.stringify(name));
  }
  for (const description of ['x'.repeat(513), 'a\u0000', '\ud800', null, 1]) {
    t.same(refusalOf({ ...SKILL, description }), invalid(RESOURCE_INPUT_REFUSALS.description));
  }
});

t.test('the source is exactly an inline or a workspace_file source', async (t) => {
  const refusedSources: unknown[] = [
    null,
    'inline',
    [],
    {},
    { kind: 'inline' },
    { kind: 'inline', content: 1 },
    { kind: 'inline', content: null },
    { kind: 'inline', content: 'x', path: 'a' },
    { kind: 'inline', path: 'a' },
    { kind: 'workspace_file' },
    { kind: 'workspace_file', content: 'x' },
    { kind: 'workspace_file', path: 'a', content: 'x' },
    { kind: 'file', path: 'a' },
    { kind: 'url', content: 'x' },
    { content: 'x' },
  ];
  for (const source of refusedSources) {
    t.same(refusalOf({ ...SKILL, source }), invalid(RESOURCE_INPUT_REFUSALS.source), JSON.stringify(source));
  }
});

t.test('inline content is well-formed text within the per-source maximum of its kind', async (t) => {
  const inline = (kind: string, content: string) => ({ ...SKILL, kind, source: { kind: 'inline', content } });
  t.same(refusalOf(inline('skill', 'a\ud800')), invalid(RESOURCE_INPUT_REFUSALS.inline_text));
  const tooLarge = invalid(CAPTURED_SOURCE_REFUSALS.too_large);
  t.equal(refusalOf(inline('skill', 'x'.repeat(16_384))), 'accepted');
  t.same(refusalOf(inline('skill', 'x'.repeat(16_385))), tooLarge);
  t.same(refusalOf(inline('skill', 'é'.repeat(8_193))), tooLarge, 'counted in UTF-8 bytes');
  t.equal(refusalOf(inline('tool', 'x'.repeat(32_768))), 'accepted');
  t.same(refusalOf(inline('tool', 'x'.repeat(32_769))), tooLarge);
});

t.test('workspace paths are relative, at most 1,024 bytes, without empty or dot components', async (t) => {
  const accepted = [
    'a',
    'skills/review.md',
    'a/b/c.json',
    '.hidden',
    'a/.config/x',
    'a..b',
    '...',
    'é/日本.md',
  ];
  for (const path of accepted) {
    t.ok(isValidSourcePath(path), path);
    t.equal(refusalOf({ ...SKILL, source: { kind: 'workspace_file', path } }), 'accepted', path);
  }
  t.ok(isValidSourcePath(`a/${'b'.repeat(1022)}`), '1,024 bytes');
  const refused: unknown[] = [
    '',
    '/abs',
    '/',
    'a//b',
    'a/',
    './a',
    'a/./b',
    '../a',
    'a/..',
    '..',
    '.',
    'a\u0000b',
    'a\ud800',
    `a/${'b'.repeat(1023)}`,
    `a/${'é'.repeat(512)}`,
    null,
    1,
  ];
  for (const path of refused) {
    t.notOk(isValidSourcePath(path), JSON.stringify(path));
    t.same(
      refusalOf({ ...SKILL, source: { kind: 'workspace_file', path } }),
      invalid(RESOURCE_INPUT_REFUSALS.path),
      JSON.stringify(path),
    );
  }
});

t.test('refusal messages never echo the input', async (t) => {
  const secret = 'sk-live-0123456789';
  const attempts = [
    { ...SKILL, name: secret },
    { ...SKILL, description: `${secret}\u0000` },
    { ...SKILL, source: { kind: 'workspace_file', path: `/${secret}` } },
    { ...SKILL, [secret]: 1 },
  ];
  for (const value of attempts) t.notMatch(JSON.stringify(refusalOf(value)), /sk-live/);
});
