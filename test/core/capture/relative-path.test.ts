import fc from 'fast-check';
import t, { type Test } from 'tap';
import { CAPTURE_REFUSALS, type CaptureRefusal } from '../../../core/capture/refusals.js';
import { parseRelativePath } from '../../../core/capture/relative-path.js';
import { WireError } from '../../../core/errors.js';
import { PROFILE_LIMITS } from '../../../core/limits.js';

function refusedWith(t: Test, path: unknown, cause: CaptureRefusal): void {
  t.throws(
    () => parseRelativePath(path),
    { code: 'invalid_payload', message: CAPTURE_REFUSALS[cause] },
    cause,
  );
}

t.test('a relative path splits into its components', async (t) => {
  t.same(parseRelativePath('file.txt'), ['file.txt']);
  t.same(parseRelativePath('a/b/c.json'), ['a', 'b', 'c.json']);
  t.same(parseRelativePath('...'), ['...'], 'three dots is an ordinary name');
  t.same(parseRelativePath('..a/b..'), ['..a', 'b..']);
  t.same(parseRelativePath('dir/naïve ☃.md'), ['dir', 'naïve ☃.md']);
});

t.test('the path limit counts UTF-8 bytes, inclusive', async (t) => {
  const limit = PROFILE_LIMITS.source_path_bytes;
  const atLimit = `${'a/'.repeat(limit / 2 - 1)}bb`;
  t.equal(Buffer.byteLength(atLimit), limit);
  t.equal(parseRelativePath(atLimit).length, limit / 2);
  refusedWith(t, `${atLimit}c`, 'path_too_long');
  // 342 three-byte characters are 1,026 bytes but only 342 UTF-16 units
  const wide = Array.from({ length: 6 }, () => '☃'.repeat(57)).join('/');
  t.ok(wide.length < limit && Buffer.byteLength(wide) > limit);
  refusedWith(t, wide, 'path_too_long');
});

t.test('lexically unsafe paths are refused', async (t) => {
  refusedWith(t, '', 'path_empty_component');
  refusedWith(t, 'a//b', 'path_empty_component');
  refusedWith(t, 'a/', 'path_empty_component');
  refusedWith(t, '/etc/passwd', 'path_absolute');
  refusedWith(t, '//etc', 'path_absolute');
  refusedWith(t, '.', 'path_dot_component');
  refusedWith(t, './a', 'path_dot_component');
  refusedWith(t, 'a/./b', 'path_dot_component');
  refusedWith(t, '..', 'path_dot_component');
  refusedWith(t, '../outside', 'path_dot_component');
  refusedWith(t, 'a/../../b', 'path_dot_component');
  refusedWith(t, 'a/..', 'path_dot_component');
  refusedWith(t, 'a\0b', 'path_forbidden_character');
  refusedWith(t, 'a\\..\\b', 'path_forbidden_character');
  refusedWith(t, `${'n'.repeat(256)}`, 'path_component_too_long');
  t.same(parseRelativePath('n'.repeat(255)), ['n'.repeat(255)]);
  refusedWith(t, 'bad\ud800name', 'path_not_text');
  refusedWith(t, 42, 'path_not_text');
  refusedWith(t, null, 'path_not_text');
  refusedWith(t, ['a'], 'path_not_text');
});

t.test('any string is either refused with invalid_payload or split into safe components', async (t) => {
  const alphabet = fc.constantFrom('a', 'b', '.', '/', '\\', '\0', '☃', '\ud800', ' ');
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: alphabet, maxLength: 40 }), fc.string()), (path) => {
      let components: string[];
      try {
        components = parseRelativePath(path);
      } catch (error) {
        return error instanceof WireError && error.code === 'invalid_payload';
      }
      return (
        components.join('/') === path &&
        !path.startsWith('/') &&
        components.every((c) => c !== '' && c !== '.' && c !== '..' && !c.includes('\0') && !c.includes('\\'))
      );
    }),
    { numRuns: 2_000 },
  );
  t.pass('property held');
});
