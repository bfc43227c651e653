import { type BigIntStats, closeSync, fstatSync, lstatSync } from 'node:fs';
import { RE2JS, RE2JSException } from 're2js';
import { isExcluded, openDirectoryBeneath, WalkRefusal } from '../capture/descriptor-walk.js';
import { decodeExactUtf8 } from '../capture/exact-utf8.js';
import { isHiddenPath } from '../confinement/hidden-places.js';
import { PROFILE_LIMITS } from '../limits.js';
import { utf8ByteLength } from '../resources/unicode.js';
import { fitListInJson } from '../tool-results/fitted-json.js';
import { entryPath, readEntries } from './directory-entries.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';
import { WORKSPACE_TOOL_LIMITS as LIMITS } from './workspace-tool-limits.js';
import {
  type HeldWorkspace,
  readWholeText,
  type WorkspaceHooks,
  withDirectory,
  withRegularFile,
} from './workspace-walk.js';

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
}

export interface SearchFilesOutput {
  matches: SearchMatch[];
  /** Whether a bound cut the search short, or the matches were cut to fit the output bound. */
  truncated: boolean;
  files_searched: number;
  files_skipped: number;
  /** Whether the pattern is not RE2 syntax and was searched for as literal text. */
  literal: boolean;
}

/** Directories never searched, whatever the credential rules say. */
const SKIPPED_DIRECTORY_NAMES = new Set(['.git']);

interface Search {
  readonly held: HeldWorkspace;
  readonly matcher: LineMatcher;
  readonly hooks: WorkspaceHooks | undefined;
  readonly found: SearchMatch[];
  /** Files read, text or not: what the file bound counts. */
  reads: number;
  searched: number;
  skipped: number;
  truncated: boolean;
  /** Set once a bound is reached: nothing more is read. */
  done: boolean;
}

/** How a pattern is searched for, and whether it was taken as literal text. */
export interface LineMatcher {
  readonly literal: boolean;
  test(line: string): boolean;
}

/**
 * The pattern as an RE2 regular expression when RE2 accepts it, else as literal text. RE2 (here its
 * JavaScript port) never backtracks: its time grows with the line's length times the pattern's compiled
 * size, so no pattern can take time exponential in its input, as `(a+)+$` does in a backtracking engine.
 */
export function lineMatcher(pattern: string): LineMatcher {
  let expression: RE2JS;
  try {
    expression = RE2JS.compile(pattern);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    return { literal: true, test: (line) => line.includes(pattern) };
  }
  return { literal: false, test: (line) => expression.test(line) };
}

/**
 * Searches the text files beneath a directory, depth first in byte order of names, without following a
 * symlink. Credential-like paths, daemon state, `.git` directories, non-regular, hard-linked, oversized
 * and binary files are passed over, and so are files whose path is longer than a path argument may be (no
 * tool could name them); `files_skipped` counts the non-directories passed over (entries whose name is not
 * UTF-8 among them), and a file that changed while read is one of them. The matches are cut to what fits
 * the output bound, each whole: a match with its path and line takes a few kilobytes at most.
 */
export function searchFiles(
  held: HeldWorkspace,
  args: { path: readonly string[]; pattern: string },
  hooks?: WorkspaceHooks,
): SearchFilesOutput {
  const search: Search = {
    held,
    matcher: lineMatcher(args.pattern),
    hooks,
    found: [],
    reads: 0,
    searched: 0,
    skipped: 0,
    truncated: false,
    done: false,
  };
  withDirectory(held, args.path, hooks, (directoryFd) => searchDirectory(search, directoryFd, args.path, 0));
  const shape = (matches: readonly SearchMatch[], cut: boolean): SearchFilesOutput => ({
    matches: [...matches],
    truncated: cut || search.truncated,
    files_searched: search.searched,
    files_skipped: search.skipped,
    literal: search.matcher.literal,
  });
  const fitted = fitListInJson(search.found, LIMITS.output_bytes, shape);
  return shape(search.found.slice(0, fitted.kept), fitted.truncated);
}

function searchDirectory(search: Search, directoryFd: number, path: readonly string[], depth: number): void {
  for (const entry of readEntries(directoryFd)) {
    if (search.done) return;
    const name = decodeExactUtf8(entry.name);
    if (name === null) {
      search.skipped += 1;
      continue;
    }
    const entryComponents = [...path, name];
    let stats: BigIntStats;
    try {
      stats = lstatSync(entryPath(directoryFd, entry.name), { bigint: true });
    } catch {
      continue;
    }
    if (stats.isDirectory()) {
      if (SKIPPED_DIRECTORY_NAMES.has(name) || isHiddenPath(entryComponents, search.held.hidden)) continue;
      if (depth >= LIMITS.search_depth_max) {
        search.truncated = true;
        continue;
      }
      searchSubdirectory(search, directoryFd, entryComponents, depth + 1);
    } else if (
      !stats.isFile() ||
      stats.nlink !== 1n ||
      stats.size > BigInt(LIMITS.search_file_bytes_max) ||
      isHiddenPath(entryComponents, search.held.hidden) ||
      utf8ByteLength(entryComponents.join('/')) > PROFILE_LIMITS.source_path_bytes
    ) {
      search.skipped += 1;
    } else searchFile(search, directoryFd, entryComponents);
  }
}

function searchSubdirectory(search: Search, parentFd: number, path: readonly string[], depth: number): void {
  let directoryFd: number;
  try {
    directoryFd = openDirectoryBeneath(parentFd, path[path.length - 1]!);
  } catch (error) {
    // Most likely swapped for a symlink since it was looked at: never followed.
    if (isRefusal(error)) return;
    throw error;
  }
  try {
    if (isExcluded(fstatSync(directoryFd, { bigint: true }), search.held.excluded)) return;
    search.hooks?.afterDirectoryOpen?.(path.length);
    searchDirectory(search, directoryFd, path, depth);
  } finally {
    closeSync(directoryFd);
  }
}

function searchFile(search: Search, directoryFd: number, path: readonly string[]): void {
  if (search.reads >= LIMITS.search_files_max) {
    search.truncated = true;
    search.done = true;
    return;
  }
  search.reads += 1;
  let text: string;
  try {
    text = withRegularFile(directoryFd, path[path.length - 1]!, search.hooks, (file) =>
      readWholeText(file, LIMITS.search_file_bytes_max, search.hooks),
    );
  } catch (error) {
    if (!isRefusal(error)) throw error;
    search.skipped += 1;
    return;
  }
  search.searched += 1;
  const shown = path.join('/');
  let lineNumber = 0;
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    lineNumber += 1;
    const line =
      end > start && text.charCodeAt(end - 1) === 0x0d ? text.slice(start, end - 1) : text.slice(start, end);
    if (search.matcher.test(line)) {
      if (search.found.length >= LIMITS.search_matches_max) {
        search.truncated = true;
        search.done = true;
        return;
      }
      search.found.push({
        path: shown,
        line: lineNumber,
        text: firstCharacters(line, LIMITS.search_line_chars_max),
      });
    }
    if (newline === -1) break;
    start = newline + 1;
  }
}

/** The line cut to `count` characters (code points, so no surrogate pair is split). */
function firstCharacters(line: string, count: number): string {
  if (line.length <= count) return line;
  let end = 0;
  for (let taken = 0; taken < count && end < line.length; taken += 1) {
    end += (line.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  }
  return line.slice(0, end);
}

function isRefusal(error: unknown): boolean {
  return error instanceof WalkRefusal || error instanceof WorkspaceToolFailure;
}
