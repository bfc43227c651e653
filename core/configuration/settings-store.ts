import { WireError } from '../errors.js';
import type { ModelSelection } from '../provider/chat-provider.js';
import {
  applySettingsChanges,
  effectiveSelection,
  type SettingsChanges,
  type SettingsDocument,
  type SettingsScope,
  type SettingsView,
  settingsView,
} from './model-settings.js';

/** How the settings reach the disk; a read rejects when the file is not a valid settings file. */
export interface SettingsPersistence {
  read(): Promise<SettingsDocument>;
  write(document: SettingsDocument): Promise<void>;
  /** Whether `read` rejected because the file cannot be used (rather than because of a bug). */
  isInvalid(error: unknown): boolean;
}

export interface SettingsStoreOptions {
  /** The document read at startup, or null when the file was not valid. */
  document: SettingsDocument | null;
  /** The `--model` the daemon started with: the selection when no setting names one. */
  defaultModel: string | null;
  persistence: SettingsPersistence;
  maxPins: number;
}

export const settingsFileRefusals = {
  invalidFile: () => new WireError('conflict', 'the settings file is not valid; fix or remove it'),
  unknownModel: () => new WireError('conflict', 'the model is not in the catalog; refresh it first'),
} as const;

/**
 * The model settings: the document in memory, which turn admission and `status` read without waiting,
 * and the file, which reloads and writes go through. A file that is not valid counts as empty for
 * selections and is never written over. Writes are the configuration worker's, one at a time; a reload
 * may run beside one and then never replaces what the write put in memory.
 */
export class SettingsStore {
  readonly #defaultModel: string | null;
  readonly #persistence: SettingsPersistence;
  readonly #maxPins: number;
  #document: SettingsDocument;
  #valid: boolean;
  /** Moves at the start and at the end of every write. */
  #generation = 0;

  constructor(options: SettingsStoreOptions) {
    this.#document = options.document ?? {};
    this.#valid = options.document !== null;
    this.#defaultModel = options.defaultModel;
    this.#persistence = options.persistence;
    this.#maxPins = options.maxPins;
  }

  /** What a turn in `workspace` is admitted with now; null when no model is selected. */
  selection(workspace: string | null): ModelSelection | null {
    const effective = effectiveSelection(this.#document, workspace, this.#defaultModel);
    if (effective.model === null) return null;
    return { model: effective.model, reasoningEffort: effective.reasoning_effort, fast: effective.fast };
  }

  /** Reads the file again; a write that ran meanwhile keeps what it put in memory. */
  async reload(): Promise<void> {
    const generation = this.#generation;
    let document: SettingsDocument | null;
    try {
      document = await this.#persistence.read();
    } catch (error) {
      if (!this.#persistence.isInvalid(error)) throw error;
      document = null;
    }
    if (generation !== this.#generation) return;
    this.#document = document ?? {};
    this.#valid = document !== null;
  }

  /** `settings.get`: the file as it is now, seen from `workspace`. */
  async view(workspace: string | null): Promise<SettingsView> {
    await this.reload();
    if (!this.#valid) throw settingsFileRefusals.invalidFile();
    return settingsView(this.#document, workspace, this.#defaultModel);
  }

  /**
   * `settings.update`: applies the changes to the file as it is now (so that fields written by anyone
   * else survive), checks a named model against the catalog, writes atomically, then uses the result.
   */
  async update(
    scope: SettingsScope,
    changes: SettingsChanges,
    catalog: { has(modelId: string): boolean },
  ): Promise<SettingsView> {
    this.#generation++;
    try {
      let current: SettingsDocument;
      try {
        current = await this.#persistence.read();
      } catch (error) {
        if (this.#persistence.isInvalid(error)) {
          this.#document = {};
          this.#valid = false;
          throw settingsFileRefusals.invalidFile();
        }
        throw error;
      }
      const next = applySettingsChanges(current, scope, changes, this.#maxPins);
      if (typeof changes.model === 'string' && !catalog.has(changes.model)) {
        throw settingsFileRefusals.unknownModel();
      }
      await this.#persistence.write(next);
      this.#document = next;
      this.#valid = true;
      return settingsView(next, scope.kind === 'project' ? scope.workspace : null, this.#defaultModel);
    } finally {
      this.#generation++;
    }
  }
}
