import { isAbsolute, normalize } from 'node:path';
import { WireError } from '../errors.js';
import type { ReasoningEffort } from '../provider/chat-provider.js';

/** The settings a project (a workspace) pins; other fields of its entry are carried through. */
export interface ProjectPin {
  model?: string;
  reasoning_effort?: ReasoningEffort;
  readonly [field: string]: unknown;
}

/**
 * The settings file as a document: the known fields checked, every other field (at the top level and in
 * each project pin) carried through every write untouched.
 */
export interface SettingsDocument {
  model?: string;
  reasoning_effort?: ReasoningEffort;
  fast?: boolean;
  projects?: Readonly<Record<string, ProjectPin>>;
  readonly [field: string]: unknown;
}

/** Where a write goes: the global settings, or the pin of one workspace. */
export type SettingsScope = { kind: 'global' } | { kind: 'project'; workspace: string };

/** A write: a member set to a value stores it, set to null removes it, absent leaves it. */
export interface SettingsChanges {
  model?: string | null;
  reasoning_effort?: ReasoningEffort | null;
  fast?: boolean | null;
}

/** What `settings.get` and `settings.update` answer. */
export interface SettingsView {
  global: { model: string | null; reasoning_effort: ReasoningEffort | null; fast: boolean | null };
  project: { model: string | null; reasoning_effort: ReasoningEffort | null } | null;
  effective: { model: string | null; reasoning_effort: ReasoningEffort | null; fast: boolean };
}

export const settingsRefusals = {
  relativeWorkspace: () => new WireError('invalid_payload', 'the workspace must be an absolute path'),
  fastIsGlobal: () => new WireError('invalid_payload', 'fast mode is a global setting'),
  noChange: () => new WireError('invalid_payload', 'the update changes no setting'),
  tooManyPins: () => new WireError('limit_exceeded', 'the settings hold as many project pins as they may'),
} as const;

/**
 * The key of a workspace's pin: its absolute path, normalized as `session.create` normalizes it (no `.`,
 * `..` or trailing slash). The directory need not exist: a pin outlives its workspace harmlessly.
 */
export function projectKey(workspace: string, maxBytes: number): string {
  if (!isAbsolute(workspace) || workspace.includes('\0') || Buffer.byteLength(workspace) > maxBytes) {
    throw settingsRefusals.relativeWorkspace();
  }
  const normalized = normalize(workspace);
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

/**
 * The selection of `workspace` (null: no project): the project's pin over the global settings over the
 * startup default model; fast mode is global only.
 */
export function effectiveSelection(
  document: SettingsDocument,
  workspace: string | null,
  defaultModel: string | null,
): SettingsView['effective'] {
  const pin = workspace === null ? undefined : pinOf(document, workspace);
  return {
    model: pin?.model ?? document.model ?? defaultModel,
    reasoning_effort: pin?.reasoning_effort ?? document.reasoning_effort ?? null,
    fast: document.fast ?? false,
  };
}

export function settingsView(
  document: SettingsDocument,
  workspace: string | null,
  defaultModel: string | null,
): SettingsView {
  const pin = workspace === null ? undefined : pinOf(document, workspace);
  return {
    global: {
      model: document.model ?? null,
      reasoning_effort: document.reasoning_effort ?? null,
      fast: document.fast ?? null,
    },
    project:
      workspace === null
        ? null
        : { model: pin?.model ?? null, reasoning_effort: pin?.reasoning_effort ?? null },
    effective: effectiveSelection(document, workspace, defaultModel),
  };
}

/**
 * The document after a scoped write. Only the named members change: unknown fields, the other scope and
 * every other project's pin stay as they are. A pin left with no field at all is removed.
 */
export function applySettingsChanges(
  document: SettingsDocument,
  scope: SettingsScope,
  changes: SettingsChanges,
  maxPins: number,
): SettingsDocument {
  const names = Object.keys(changes) as Array<keyof SettingsChanges>;
  if (names.length === 0) throw settingsRefusals.noChange();
  if (scope.kind === 'global') return withChanges(document, changes) as SettingsDocument;
  if ('fast' in changes) throw settingsRefusals.fastIsGlobal();
  const projects: Record<string, ProjectPin> = { ...document.projects };
  if (!(scope.workspace in projects) && Object.keys(projects).length >= maxPins) {
    throw settingsRefusals.tooManyPins();
  }
  const pin = withChanges(projects[scope.workspace] ?? {}, changes) as ProjectPin;
  if (Object.keys(pin).length === 0) delete projects[scope.workspace];
  else projects[scope.workspace] = pin;
  const next: Record<string, unknown> = { ...document, projects };
  if (Object.keys(projects).length === 0 && document.projects === undefined) delete next.projects;
  return next as SettingsDocument;
}

function withChanges(
  target: Readonly<Record<string, unknown>>,
  changes: SettingsChanges,
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...target };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete next[name];
    else next[name] = value;
  }
  return next;
}

function pinOf(document: SettingsDocument, workspace: string): ProjectPin | undefined {
  return Object.hasOwn(document.projects ?? {}, workspace) ? document.projects?.[workspace] : undefined;
}
