import { ownFolder } from '../confinement/confined-workspace.js';
import { cutUtf8, utf8ByteLength } from '../resources/unicode.js';
import type { InstalledSkill } from '../skills/installed-skills.js';
import { fitTextInJson } from '../tool-results/fitted-json.js';
import type { WorkspaceToolOutcome, WorkspaceToolRequest } from '../workspace/workspace-tools.js';
import { BUILTIN_LIMITS } from './builtin-limits.js';
import type { ToolOutcome } from './daemon-call.js';

/** The installed skills `load_skill` serves, and the daemon state no read of theirs may enter. */
export interface SkillShelf {
  installed: readonly InstalledSkill[];
  excludedDirectories: readonly string[];
}

/** `load_skill`'s arguments, checked against its schema. */
export interface LoadSkillArguments {
  name: string;
  path?: string;
  offset?: number;
  length?: number;
}

/** Runs one `read_file` request on the workspace tools' threads. */
export type WindowReader = (request: WorkspaceToolRequest) => Promise<WorkspaceToolOutcome>;

const UNKNOWN_SKILL: ToolOutcome = {
  ok: false,
  code: 'unknown_skill',
  message: 'no installed skill has that name',
};

/**
 * `load_skill`: without `path`, a window of the skill's text (its SKILL.md after the front matter, as read
 * at startup) with its description and the list of its folder's files; with `path`, a window of one file
 * of its folder, read now by `read_file` on the workspace tools' threads from the skill's folder (so the
 * path is relative to it, confined and paged exactly as a workspace path is). Each window starts at
 * `offset` (a byte; inside a character, at that character), takes at most `length` bytes (for a file, the
 * read window's default when left out; for the text, whatever fits), and is then cut further, between
 * characters, so that the whole result fits the built-in output bound once encoded; `next_offset` says
 * where to read on.
 */
export async function loadSkill(
  shelf: SkillShelf,
  args: LoadSkillArguments,
  read: WindowReader,
): Promise<ToolOutcome> {
  const skill = shelf.installed.find((candidate) => candidate.name === args.name);
  if (skill === undefined) return UNKNOWN_SKILL;
  if (args.path === undefined) return { ok: true, output: textWindow(skill, args.offset ?? 0, args.length) };
  const outcome = await read({
    tool: 'read_file',
    workspace: ownFolder(skill.folder.root, skill.folder.hidden),
    excludedDirectories: shelf.excludedDirectories,
    arguments: {
      path: [...skill.folder.components, args.path].join('/'),
      ...(args.offset === undefined ? {} : { offset: args.offset }),
      ...(args.length === undefined ? {} : { length: args.length }),
    },
  });
  if (!outcome.ok) return outcome;
  const window = JSON.parse(outcome.output) as { size: number; offset: number; content: string };
  return { ok: true, output: fileWindow(skill, args.path, window) };
}

function textWindow(skill: InstalledSkill, offset: number, length: number | undefined): string {
  const bytes = Buffer.from(skill.body, 'utf8');
  const size = bytes.length;
  let start = Math.min(offset, size);
  while (start > 0 && start < size && isContinuation(bytes[start]!)) start -= 1;
  const rest = bytes.subarray(start).toString('utf8');
  const text = length === undefined ? rest : firstBytes(rest, length);
  return fitTextInJson(text, BUILTIN_LIMITS.output_bytes, (content) => ({
    name: skill.name,
    description: skill.description,
    files: skill.files,
    files_truncated: skill.filesTruncated,
    ...page(size, offset >= size ? offset : start, content),
  })).json;
}

function fileWindow(
  skill: InstalledSkill,
  path: string,
  window: { size: number; offset: number; content: string },
): string {
  return fitTextInJson(window.content, BUILTIN_LIMITS.output_bytes, (content) => ({
    name: skill.name,
    path,
    ...page(window.size, window.offset, content),
  })).json;
}

/** The members `read_file` answers with, for `content` taken from byte `offset` of `size`. */
function page(size: number, offset: number, content: string) {
  const length = utf8ByteLength(content);
  const next = offset + length;
  return { size, offset, length, content, next_offset: next < size ? next : null };
}

/** At most `length` bytes of `text`, cut between characters, but always its first character. */
function firstBytes(text: string, length: number): string {
  const cut = cutUtf8(text, length);
  if (cut !== '' || text === '') return cut;
  return String.fromCodePoint(text.codePointAt(0)!);
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}
