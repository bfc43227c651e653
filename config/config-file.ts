import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';

export const CONFIG_FILE_NAME = 'config.json';

/**
 * Only the fields the daemon reads are checked. Objects stay open at every level so fields the daemon does
 * not know (or no longer knows) are carried through rather than refused.
 */
const DisabledNames = Type.Object({ disabled: Type.Optional(Type.Array(Type.String())) });
const ConfigFileSchema = Type.Object({
  skills: Type.Optional(DisabledNames),
  tools: Type.Optional(DisabledNames),
});
const configFileValidator = Compile(ConfigFileSchema);

/** A section that lists names the daemon keeps out of use; its other fields are carried through. */
export interface DisabledSection {
  readonly disabled: readonly string[];
  readonly [field: string]: unknown;
}

/**
 * The loaded configuration. Known fields are filled with their defaults; unknown fields, at the top level
 * and inside known sections, are passed through untouched. The daemon never writes the file back.
 */
export interface DaemonConfig {
  readonly skills: DisabledSection;
  readonly tools: DisabledSection;
  readonly [field: string]: unknown;
}

/** A config file the daemon refuses to start with. The message names the file and field, never a value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  /** The JSON pointer of the offending field ('' for the whole document), or null when it is not a field. */
  readonly pointer: string | null;

  constructor(message: string, pointer: string | null = null) {
    super(`${CONFIG_FILE_NAME}: ${message}`);
    this.pointer = pointer;
  }
}

export function defaultConfig(): DaemonConfig {
  return { skills: { disabled: [] }, tools: { disabled: [] } };
}

/** Reads `<home>/config.json`; a missing file means the defaults. */
export function loadConfigFile(home: string): DaemonConfig {
  const text = readConfigText(join(home, CONFIG_FILE_NAME));
  return text === null ? defaultConfig() : parseConfig(text);
}

/** Checks and normalises the text of a config file. */
export function parseConfig(text: string): DaemonConfig {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // The parser's own message quotes the offending text, which may be a secret.
    throw new ConfigError('is not valid JSON');
  }
  const errors = configFileValidator.Errors(document);
  const first = errors[0];
  if (first) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more problems)` : '';
    throw new ConfigError(`${describeError(first)}${more}`, first.instancePath);
  }
  const file = document as Record<string, unknown> & {
    skills?: Record<string, unknown> & { disabled?: string[] };
    tools?: Record<string, unknown> & { disabled?: string[] };
  };
  return {
    ...file,
    skills: { ...file.skills, disabled: [...(file.skills?.disabled ?? [])] },
    tools: { ...file.tools, disabled: [...(file.tools?.disabled ?? [])] },
  };
}

function readConfigText(path: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ConfigError('is not valid UTF-8');
  }
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
};

/**
 * Built from the field's pointer and the schema's expectation only. The pointer holds known field names
 * and array indexes: unknown fields are never checked, so never named.
 */
function describeError(error: TLocalizedValidationError): string {
  const field = error.instancePath === '' ? 'the document' : error.instancePath;
  if (error.keyword === 'type') {
    const expected = String(error.params.type);
    return `${field} must be ${TYPE_NAMES[expected] ?? expected}`;
  }
  return `${field} is not valid`;
}
