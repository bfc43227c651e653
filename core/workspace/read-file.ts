import { readAtMost } from '../capture/descriptor-walk.js';
import { utf8ByteLength } from '../resources/unicode.js';
import { fitTextInJson } from '../tool-results/fitted-json.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';
import { WORKSPACE_TOOL_LIMITS } from './workspace-tool-limits.js';
import type { HeldWorkspace, WorkspaceHooks } from './workspace-walk.js';
import { assertUnchanged, textOf, withDirectory, withRegularFile } from './workspace-walk.js';

export interface ReadFileArguments {
  path: readonly string[];
  offset: number;
  length: number;
}

export interface ReadFileOutput {
  size: number;
  offset: number;
  length: number;
  content: string;
  next_offset: number | null;
  /** Whether the window was cut short so that the result fits its bound; `next_offset` goes on from the cut. */
  truncated: boolean;
}

/** The most bytes a window moves by to keep whole characters: a UTF-8 character has at most four. */
const CHARACTER_BYTES_MAX = 4;

const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * Reads one window of a file of any size with positioned reads. A window starting inside a character
 * starts at its first byte; one ending inside a character ends before it, except that a window always
 * holds at least one whole character, so reading on from `next_offset` always moves forward. A window whose
 * result would pass the output bound once escaped (newlines, quotes and control characters take two to six
 * bytes in JSON) is cut, between characters, to what fits; a caller that keeps the window for itself (the
 * instructions reader) passes no bound.
 */
export function readFile(
  held: HeldWorkspace,
  args: ReadFileArguments,
  hooks?: WorkspaceHooks,
  resultBytes: number = WORKSPACE_TOOL_LIMITS.output_bytes,
): ReadFileOutput {
  const directories = args.path.slice(0, -1);
  const name = args.path[args.path.length - 1]!;
  return withDirectory(held, directories, hooks, (directoryFd) =>
    withRegularFile(directoryFd, name, hooks, (file) => {
      const size = Number(file.state.size);
      if (args.offset >= size) {
        hooks?.afterRead?.();
        assertUnchanged(file);
        return { size, offset: args.offset, length: 0, content: '', next_offset: null, truncated: false };
      }
      const behind = Math.min(args.offset, CHARACTER_BYTES_MAX - 1);
      const readFrom = args.offset - behind;
      const buffer = Buffer.alloc(Math.min(size - readFrom, behind + args.length + CHARACTER_BYTES_MAX - 1));
      const got = readAtMost(file.fd, buffer, readFrom);
      hooks?.afterRead?.();
      assertUnchanged(file);
      if (got !== buffer.length) throw new WorkspaceToolFailure('changed');

      let start = behind;
      while (start > 0 && isContinuation(buffer[start])) start -= 1;
      let end = Math.min(start + args.length, got);
      if (end < got) {
        let cut = end;
        while (cut > start && isContinuation(buffer[cut])) cut -= 1;
        if (cut > start) end = cut;
        else {
          end = start + 1;
          while (end < got && end - start < CHARACTER_BYTES_MAX && isContinuation(buffer[end])) end += 1;
        }
      }
      const content = textOf(buffer.subarray(start, end));
      if (content === null) throw new WorkspaceToolFailure('binary_file');
      const offset = readFrom + start;
      const window = (text: string, truncated: boolean): ReadFileOutput => {
        const length = utf8ByteLength(text);
        const next = offset + length;
        return { size, offset, length, content: text, next_offset: next < size ? next : null, truncated };
      };
      const fitted = fitTextInJson(content, resultBytes, window);
      return window(fitted.kept, fitted.truncated);
    }),
  );
}
