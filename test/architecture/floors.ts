import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The floors the project's rooms stand on (docs/architecture.md, "Floors"). A room is a top-level folder,
 * or a folder of `core/`; `core` alone is the ground, its own files (`errors.ts`, `limits.ts`, `clock.ts`,
 * `ids.ts`, …). A file may import from its own room or from a room on a lower floor, never from one on its
 * own floor or above: so no two rooms ever import each other, even for a type.
 */
export const FLOORS: Readonly<Record<string, number>> = {
  core: 0,
  'core/auth': 1,
  'core/confinement': 1,
  'core/endpoint': 1,
  'core/executors': 1,
  'core/history': 1,
  'core/provider': 1,
  'core/resources': 1,
  'core/wire': 1,
  'core/capture': 2,
  'core/configuration': 2,
  'core/connections': 2,
  'core/operations': 2,
  'core/tool-results': 2,
  'core/capabilities': 3,
  'core/registry': 3,
  'core/sessions': 3,
  // the tools
  'core/mcp': 3,
  'core/sandbox': 3,
  'core/web': 3,
  'core/workspace': 3,
  'core/skills': 4,
  'core/agent': 5,
  'core/turns': 6,
  config: 7,
  routes: 8,
  client: 9,
  plugins: 9,
  bin: 10,
  demo: 10,
};

/** The top-level folders whose sources are checked (tests and benches may import anything). */
export const CHECKED = ['bin', 'client', 'config', 'core', 'demo', 'plugins', 'routes'];

export interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** The room of a project file given by its path from the root. */
export function roomOf(path: string): string {
  const parts = path.split(sep);
  if (parts[0] === 'core') return parts.length > 2 ? `core/${parts[1]}` : 'core';
  return parts[0]!;
}

function sourcesIn(directory: string, found: string[] = []): string[] {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) sourcesIn(path, found);
    else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** Every relative import between the checked sources, type-only ones included, by path from `root`. */
export function projectImports(root: string): Import[] {
  const imports: Import[] = [];
  for (const file of CHECKED.flatMap((folder) => sourcesIn(join(root, folder)))) {
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    const specifiers: Array<{ specifier: string; typeOnly: boolean }> = [];
    for (const statement of source.statements) {
      if (
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
        statement.moduleSpecifier &&
        ts.isStringLiteral(statement.moduleSpecifier)
      ) {
        const typeOnly = ts.isImportDeclaration(statement)
          ? (statement.importClause?.isTypeOnly ?? false)
          : statement.isTypeOnly;
        specifiers.push({ specifier: statement.moduleSpecifier.text, typeOnly });
      }
    }
    // import('…') types and dynamic imports count too
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!specifiers.some((known) => known.specifier === fileName))
        specifiers.push({ specifier: fileName, typeOnly: false });
    }
    for (const { specifier, typeOnly } of specifiers) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
      imports.push({ from: relative(root, file), to: relative(root, target), typeOnly });
    }
  }
  return imports;
}

/** The cycles of files that import one another, each as the files around it. */
export function fileCycles(imports: readonly Import[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of imports) next.set(from, [...(next.get(from) ?? []), to]);
  const cycles: string[][] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string): void => {
    const at = onPath.indexOf(file);
    if (at !== -1) {
      cycles.push(onPath.slice(at));
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const target of next.get(file) ?? []) visit(target);
    onPath.pop();
    done.add(file);
  };
  for (const file of next.keys()) visit(file);
  return cycles;
}

/** The imports that look sideways or up, with the floors they break. */
export function brokenFloors(imports: readonly Import[]): Array<Import & { rooms: string }> {
  return imports
    .filter(({ from, to }) => {
      const [a, b] = [roomOf(from), roomOf(to)];
      return a !== b && !((FLOORS[a] ?? -1) > (FLOORS[b] ?? Number.POSITIVE_INFINITY));
    })
    .map((entry) => ({ ...entry, rooms: `${roomOf(entry.from)} -> ${roomOf(entry.to)}` }));
}
