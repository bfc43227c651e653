import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The tool's contract, as the application keeps it in its workspace. */
export const FIND_NOTE_PATH = 'tools/find_note.json';

const FIND_NOTE_CONTRACT = {
  input_schema: {
    type: 'object',
    properties: { query: { type: 'string', maxLength: 100 } },
    required: ['query'],
    additionalProperties: false,
  },
  output_schema: {
    type: 'object',
    properties: { path: { type: 'string', maxLength: 200 } },
    required: ['path'],
    additionalProperties: false,
  },
  timeout_ms: 10_000,
};

/** An example notes application's workspace: a few notes and the tool's contract file. */
export function writeWorkspace(workspace: string): void {
  mkdirSync(join(workspace, 'notes'), { recursive: true });
  mkdirSync(join(workspace, 'tools'));
  writeFileSync(join(workspace, 'notes', 'tea.md'), '# Tea\nSencha, 70 °C, two minutes.\n');
  writeFileSync(join(workspace, 'notes', 'bread.md'), '# Bread\n500 g flour, 350 g water.\n');
  writeFileSync(join(workspace, FIND_NOTE_PATH), `${JSON.stringify(FIND_NOTE_CONTRACT, null, 2)}\n`);
}

/** The tool itself: the first note whose file name contains the query. */
export function findNote(workspace: string, query: string): { path: string } {
  const name = readdirSync(join(workspace, 'notes')).find((file) => file.includes(query.toLowerCase()));
  return { path: name === undefined ? 'none' : `notes/${name}` };
}
