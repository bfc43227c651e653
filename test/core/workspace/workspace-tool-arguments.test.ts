import t, { type Test } from 'tap';
import { parseWorkspaceToolRequest } from '../../../core/workspace/workspace-tool-arguments.js';
import { WorkspaceToolFailure } from '../../../core/workspace/workspace-tool-errors.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { WORKSPACE_TOOL_PARAMETERS } from '../../../core/workspace/workspace-tool-parameters.js';
import type { WorkspaceToolName } from '../../../core/workspace/workspace-tool-request.js';
import { pinnedWorkspace } from '../../helpers/confined.js';

const parse = (tool: WorkspaceToolName, args: unknown) =>
  parseWorkspaceToolRequest({
    tool,
    workspace: pinnedWorkspace('/ws'),
    excludedDirectories: ['/state'],
    arguments: args as Record<string, unknown>,
  });

function refuses(t: Test, tool: WorkspaceToolName, args: unknown, code: string, name: string): void {
  t.throws(() => parse(tool, args), { name: 'WorkspaceToolFailure', code }, name);
}

t.test('defaults are filled in and paths become components', async (t) => {
  t.same(parse('read_file', { path: 'a/b.txt' }).call, {
    tool: 'read_file',
    path: ['a', 'b.txt'],
    offset: 0,
    length: WORKSPACE_TOOL_LIMITS.read_length_max,
  });
  t.same(parse('search_files', { pattern: 'x' }).call, { tool: 'search_files', path: [], pattern: 'x' });
  t.same(parse('list_directory', { path: '.' }).call, { tool: 'list_directory', path: [], offset: 0 });
  t.same(parse('list_directory', { path: 'd', offset: 500 }).call, {
    tool: 'list_directory',
    path: ['d'],
    offset: 500,
  });
  t.same(parse('edit_file', { path: 'f', old_text: 'a', new_text: '' }).call, {
    tool: 'edit_file',
    path: ['f'],
    oldText: 'a',
    newText: '',
  });
  const job = parse('write_file', { path: 'f', content: '' });
  t.same(job.excludedDirectories, ['/state']);
  t.equal(job.workspace.path, '/ws');
});

t.test('unknown members, missing members, wrong types and non-objects are invalid_arguments', async (t) => {
  refuses(t, 'read_file', { path: 'f', extra: 1 }, 'invalid_arguments', 'unknown member');
  refuses(t, 'read_file', {}, 'invalid_arguments', 'missing path');
  refuses(t, 'read_file', { path: 7 }, 'invalid_arguments', 'number path');
  refuses(t, 'read_file', { path: 'f', offset: '0' }, 'invalid_arguments', 'string offset');
  refuses(t, 'read_file', { path: 'f', offset: 1.5 }, 'invalid_arguments', 'fractional offset');
  refuses(t, 'read_file', { path: 'f', offset: -1 }, 'invalid_arguments', 'negative offset');
  refuses(t, 'read_file', { path: 'f', offset: 2 ** 53 }, 'invalid_arguments', 'offset beyond safe integers');
  refuses(t, 'read_file', { path: 'f', length: 0 }, 'invalid_arguments', 'zero length');
  refuses(t, 'read_file', { path: 'f', length: null }, 'invalid_arguments', 'null length');
  refuses(t, 'write_file', { path: 'f' }, 'invalid_arguments', 'missing content');
  refuses(t, 'edit_file', { path: 'f', old_text: '', new_text: 'x' }, 'invalid_arguments', 'empty old_text');
  refuses(t, 'edit_file', { path: 'f', old_text: 'a' }, 'invalid_arguments', 'missing new_text');
  refuses(t, 'search_files', { pattern: '' }, 'invalid_arguments', 'empty pattern');
  refuses(t, 'list_directory', [], 'invalid_arguments', 'an array');
  refuses(t, 'list_directory', null, 'invalid_arguments', 'null');
  refuses(t, 'list_directory', { path: '' }, 'invalid_arguments', 'empty path');
  refuses(t, 'list_directory', { path: '.', offset: -1 }, 'invalid_arguments', 'negative listing offset');
  refuses(t, 'list_directory', { path: '.', offset: 0.5 }, 'invalid_arguments', 'fractional listing offset');
  refuses(
    t,
    'list_directory',
    { path: '.', offset: 2 ** 53 },
    'invalid_arguments',
    'listing offset too large',
  );
  refuses(t, 'write_file', { path: 'f', content: 'a\ud800b' }, 'invalid_arguments', 'a lone surrogate');
  t.throws(() => parse('nope' as WorkspaceToolName, { path: 'f' }), WorkspaceToolFailure, 'an unknown tool');
});

t.test('bounds, exactly at and one past each', async (t) => {
  const { read_length_max, write_bytes_max, search_pattern_chars_max, path_chars_max } =
    WORKSPACE_TOOL_LIMITS;
  t.equal(read_length_max, 16_384);
  t.equal(write_bytes_max, 262_144);
  t.equal(search_pattern_chars_max, 256);
  t.equal(parse('read_file', { path: 'f', length: 16_384 }).call.tool, 'read_file', 'length 16384');
  refuses(t, 'read_file', { path: 'f', length: 16_385 }, 'invalid_arguments', 'length 16385');

  t.ok(parse('write_file', { path: 'f', content: 'x'.repeat(262_144) }), 'content of 262144 bytes');
  refuses(t, 'write_file', { path: 'f', content: 'x'.repeat(262_145) }, 'invalid_arguments', '262145 bytes');
  t.ok(parse('write_file', { path: 'f', content: '\u00e9'.repeat(131_072) }), '131072 two-byte characters');
  refuses(
    t,
    'write_file',
    { path: 'f', content: `${'\u00e9'.repeat(131_072)}x` },
    'invalid_arguments',
    'one byte past in characters well under the character bound',
  );

  t.ok(parse('search_files', { pattern: 'p'.repeat(256) }), 'pattern of 256 characters');
  t.ok(parse('search_files', { pattern: '\u{1f600}'.repeat(256) }), '256 astral characters');
  refuses(t, 'search_files', { pattern: 'p'.repeat(257) }, 'invalid_arguments', 'pattern of 257 characters');

  t.ok(parse('read_file', { path: 'p'.repeat(255) }), 'one component of 255 bytes');
  refuses(t, 'read_file', { path: 'p'.repeat(path_chars_max + 1) }, 'invalid_arguments', 'path too long');
  refuses(
    t,
    'read_file',
    { path: '\u00e9'.repeat(600) },
    'invalid_path',
    'path under the characters, over the bytes',
  );
});

t.test('paths go through the lexical checks of the capture', async (t) => {
  for (const [path, name] of [
    ['../outside/secret.txt', '..'],
    ['a/../f', 'inner ..'],
    ['./f', '.'],
    ['/etc/passwd', 'absolute'],
    ['a//f', 'empty component'],
    ['a/', 'trailing slash'],
    ['f\0', 'NUL'],
    ['a\\f', 'backslash'],
    ['p'.repeat(256), 'component over NAME_MAX'],
  ] as const) {
    refuses(t, 'read_file', { path }, 'invalid_path', `read_file: ${name}`);
    refuses(t, 'list_directory', { path }, 'invalid_path', `list_directory: ${name}`);
    refuses(t, 'write_file', { path, content: '' }, 'invalid_path', `write_file: ${name}`);
    refuses(t, 'search_files', { pattern: 'x', path }, 'invalid_path', `search_files: ${name}`);
    refuses(t, 'edit_file', { path, old_text: 'a', new_text: 'b' }, 'invalid_path', `edit_file: ${name}`);
  }
  refuses(t, 'read_file', { path: '.' }, 'invalid_path', '"." is no file');
  refuses(t, 'write_file', { path: '.', content: '' }, 'invalid_path', '"." is not written');
  refuses(t, 'list_directory', { path: 'a/.' }, 'invalid_path', '"." only alone');
});

t.test('the schemas are TypeBox objects that refuse extra members, as the model is sent them', async (t) => {
  for (const [name, schema] of Object.entries(WORKSPACE_TOOL_PARAMETERS)) {
    const json = JSON.parse(JSON.stringify(schema));
    t.equal(json.type, 'object', name);
    t.equal(json.additionalProperties, false, name);
    t.ok(json.required.includes(name === 'search_files' ? 'pattern' : 'path'), name);
  }
  t.same(JSON.parse(JSON.stringify(WORKSPACE_TOOL_PARAMETERS.read_file)).required, ['path']);
  t.equal(
    JSON.parse(JSON.stringify(WORKSPACE_TOOL_PARAMETERS.read_file)).properties.length.maximum,
    WORKSPACE_TOOL_LIMITS.read_length_max,
  );
});
