import { join } from 'node:path';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { SettingsDocument } from '../core/configuration/model-settings.js';
import { exceedsJsonDepth } from '../core/json-depth.js';
import { CONFIGURATION_LIMITS } from '../core/limits.js';
import { REASONING_EFFORTS } from '../core/provider/chat-provider.js';
import { readTextFile, writePrivateFile } from './private-file.js';

export const SETTINGS_FILE_NAME = 'settings.json';

/** A model id: visible ASCII, as the catalog keeps them. */
export const MODEL_ID_PATTERN = `^[\\x21-\\x7e]{1,${CONFIGURATION_LIMITS.model_id_bytes}}$`;

const Model = Type.String({ pattern: MODEL_ID_PATTERN });
const Effort = Type.Enum([...REASONING_EFFORTS]);
/** Objects stay open at every level: fields the daemon does not know are carried through every write. */
const SettingsFileSchema = Type.Object({
  model: Type.Optional(Model),
  reasoning_effort: Type.Optional(Effort),
  fast: Type.Optional(Type.Boolean()),
  projects: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object({ model: Type.Optional(Model), reasoning_effort: Type.Optional(Effort) }),
    ),
  ),
});
const settingsValidator = Compile(SettingsFileSchema);

/**
 * A settings file the daemon cannot use. It names the offending field by its JSON pointer, never a value;
 * the daemon then runs on the defaults and refuses to write the file over.
 */
export class SettingsFileError extends Error {
  override readonly name = 'SettingsFileError';
  readonly pointer: string | null;

  constructor(message: string, pointer: string | null = null) {
    super(`${SETTINGS_FILE_NAME}: ${message}`);
    this.pointer = pointer;
  }
}

export function settingsPath(home: string): string {
  return join(home, SETTINGS_FILE_NAME);
}

/** Checks the text of a settings file; the document keeps every field, known or not. */
export function parseSettings(text: string): SettingsDocument {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new SettingsFileError('is not valid JSON');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new SettingsFileError('is not a JSON object', '');
  }
  if (exceedsJsonDepth(text, CONFIGURATION_LIMITS.settings_nesting_depth)) {
    throw new SettingsFileError('is nested too deeply', '');
  }
  const first = settingsValidator.Errors(document)[0];
  // Project keys are workspace paths: the pointer stops at `/projects` so that none is ever shown.
  if (first) {
    const pointer = first.instancePath.startsWith('/projects') ? '/projects' : first.instancePath;
    throw new SettingsFileError(`${pointer} is not valid`, pointer);
  }
  return document as SettingsDocument;
}

/** Reads `<home>/settings.json`; a missing file is an empty document. */
export async function readSettingsFile(home: string): Promise<SettingsDocument> {
  const text = await readTextFile(settingsPath(home));
  return text === null ? {} : parseSettings(text);
}

export async function writeSettingsFile(home: string, document: SettingsDocument): Promise<void> {
  await writePrivateFile(settingsPath(home), `${JSON.stringify(document, null, 2)}\n`);
}
