import { WireError } from '../errors.js';

/**
 * One fixed message per reason a workspace file is refused. The wire code is always `invalid_payload`
 * (wire-v2 section 8: a registration refused for its source, file type, encoding, size or credential rule);
 * the message tells the client which rule applied without echoing the path or any content.
 */
export const CAPTURE_REFUSALS = {
  path_not_text: 'the source path is not a well-formed string',
  path_too_long: 'the source path exceeds the source path byte limit',
  path_forbidden_character: 'the source path contains a NUL or a backslash',
  path_absolute: 'the source path must be relative to the workspace',
  path_empty_component: 'the source path has an empty component',
  path_dot_component: 'the source path has a dot component',
  path_component_too_long: 'a source path component exceeds the file name length limit',
  credential_path: 'the source path matches a credential rule',
  excluded_directory: 'the source path reaches daemon state',
  workspace_unavailable: 'the workspace directory cannot be opened',
  not_found: 'the source file does not exist',
  symlink: 'the source path contains a symbolic link',
  not_directory: 'a source path component is not a directory',
  not_regular_file: 'the source is not a regular file',
  hard_linked: 'the source file has more than one hard link',
  too_large: 'the source file exceeds its size limit',
  changed: 'the source file changed while it was captured',
  not_utf8: 'the source file is not valid UTF-8',
  contains_nul: 'the source file contains a NUL byte',
  unreadable: 'the source file cannot be read',
} as const;

export type CaptureRefusal = keyof typeof CAPTURE_REFUSALS;

export function captureRefusal(cause: CaptureRefusal): WireError {
  return new WireError('invalid_payload', CAPTURE_REFUSALS[cause]);
}
