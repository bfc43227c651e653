import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A workspace of the sandbox bench: where it is, and how many folders and files it holds. */
export interface BenchWorkspace {
  path: string;
  folders: number;
  files: number;
}

/** Subfolders of each folder, as in a package tree: the folders are made breadth first. */
const FANOUT = 8;
/** Written last, so that a workspace interrupted while it was made is made again. */
const COMPLETE = '.bench-complete';

/**
 * The workspace of `files` empty files, `perFolder` to a folder, in a tree of folders `FANOUT` wide (20 files
 * a folder makes 2,500 folders of 50,000 files, four levels deep), with what the sandbox covers or binds
 * read-only: a `.env` and a `.git` folder at the top and a key file in the last folder made. One already
 * complete under `directory` is used as it is.
 */
export function benchWorkspace(directory: string, files: number, perFolder: number): BenchWorkspace {
  const path = join(directory, `workspace-${files}-${perFolder}`);
  const folders = Math.max(1, Math.ceil(files / perFolder));
  const made = { path, folders, files };
  if (existsSync(join(path, COMPLETE)) && readFileSync(join(path, COMPLETE), 'utf8') === String(files)) {
    return made;
  }
  rmSync(path, { recursive: true, force: true });
  mkdirSync(path, { recursive: true });
  const relative: string[] = ['.'];
  for (let index = 1; index < folders; index += 1) {
    const parent = relative[Math.floor((index - 1) / FANOUT)]!;
    relative.push(parent === '.' ? `d${index}` : `${parent}/d${index}`);
  }
  let left = files;
  for (const folder of relative) {
    const absolute = join(path, folder);
    if (folder !== '.') mkdirSync(absolute);
    for (let file = 0; file < perFolder && left > 0; file += 1, left -= 1) {
      writeFileSync(join(absolute, `file-${file}.js`), '');
    }
  }
  mkdirSync(join(path, '.git'));
  writeFileSync(join(path, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(path, '.git', 'config'), '[core]\n');
  writeFileSync(join(path, '.env'), 'TOKEN=bench\n');
  writeFileSync(join(path, relative[relative.length - 1]!, 'id_rsa'), '');
  writeFileSync(join(path, COMPLETE), String(files));
  return made;
}
