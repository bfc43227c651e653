import { type TSchema, Type } from 'typebox';
import { WORKSPACE_TOOL_LIMITS as LIMITS } from './workspace-tool-limits.js';
import type { WorkspaceToolName } from './workspace-tool-request.js';

/*
 * The argument schemas exactly as the model is sent them, and as its arguments are checked. A string's
 * `maxLength` counts characters; the UTF-8 byte bounds of paths and content are checked after the schema.
 */

const path = (description: string) =>
  Type.String({ minLength: 1, maxLength: LIMITS.path_chars_max, description });

const directoryPath = (description: string) => path(`${description} "." is the workspace itself.`);

const content = (description: string) => Type.String({ maxLength: LIMITS.write_bytes_max, description });

export const WORKSPACE_TOOL_PARAMETERS: Readonly<Record<WorkspaceToolName, TSchema>> = Object.freeze({
  read_file: Type.Object(
    {
      path: path('The file, relative to the workspace.'),
      offset: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          description: 'The byte to start at; 0 when left out.',
        }),
      ),
      length: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: LIMITS.read_length_max,
          description: `How many bytes to read at most; ${LIMITS.read_length_max} when left out.`,
        }),
      ),
    },
    { additionalProperties: false },
  ),
  list_directory: Type.Object(
    {
      path: directoryPath('The directory, relative to the workspace.'),
      offset: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          description: 'The entry to start at, as a next_offset gave it; 0 when left out.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  search_files: Type.Object(
    {
      pattern: Type.String({
        minLength: 1,
        maxLength: LIMITS.search_pattern_chars_max,
        description: 'An RE2 regular expression, or literal text when it is not one.',
      }),
      path: Type.Optional(
        directoryPath('The directory searched beneath, relative to the workspace; "." when left out.'),
      ),
    },
    { additionalProperties: false },
  ),
  write_file: Type.Object(
    {
      path: path('The file, relative to the workspace.'),
      content: content(`The whole new content, at most ${LIMITS.write_bytes_max} UTF-8 bytes.`),
    },
    { additionalProperties: false },
  ),
  edit_file: Type.Object(
    {
      path: path('The file, relative to the workspace.'),
      old_text: Type.String({
        minLength: 1,
        maxLength: LIMITS.write_bytes_max,
        description: 'Text that occurs exactly once in the file.',
      }),
      new_text: content('The text that replaces it.'),
    },
    { additionalProperties: false },
  ),
});
