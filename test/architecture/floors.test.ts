import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from '../process/spawn-daemon.js';
import { brokenFloors, CHECKED, FLOORS, fileCycles, projectImports, roomOf } from './floors.js';

const imports = projectImports(PROJECT_ROOT);

t.test('every import of the sources looks down: to its own room or one on a lower floor', async (t) => {
  t.ok(imports.length > 1_000, `the imports were found (${imports.length})`);
  t.same(
    brokenFloors(imports).map(({ from, to, rooms }) => `${rooms}: ${from} imports ${to}`),
    [],
  );
});

t.test('no files import one another, around any cycle', async (t) => {
  t.same(fileCycles(imports), []);
});

t.test('every room of the sources has its floor, and docs/architecture.md lists each', async (t) => {
  const rooms = new Set(imports.flatMap(({ from, to }) => [roomOf(from), roomOf(to)]));
  const unplaced = [...rooms].filter((room) => !(room in FLOORS) && CHECKED.includes(room.split('/')[0]!));
  t.same(unplaced, [], 'a new room is given its floor before anything imports it');
  const docs = readFileSync(join(PROJECT_ROOT, 'docs', 'architecture.md'), 'utf8');
  const floors = docs.slice(docs.indexOf('## Floors'));
  for (const room of Object.keys(FLOORS)) {
    t.ok(floors.includes(`\`${room === 'core' ? 'core/*.ts' : `${room}/`}\``), `${room} is in the table`);
  }
});

t.test('the check finds an import that looks up, one that looks sideways, and a cycle', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'magi-floors-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  for (const folder of CHECKED) mkdirSync(join(root, folder), { recursive: true });
  write(
    'core/workspace/read-file.ts',
    "import type { Turn } from '../turns/turn.js';\nexport const a = 1;\n",
  );
  write(
    'core/turns/turn.ts',
    "import { b } from '../agent/plan.js';\nexport interface Turn { b: typeof b }\n",
  );
  write('core/agent/plan.ts', "export const b = 2;\nexport type C = import('../sandbox/x.js').X;\n");
  write('core/sandbox/x.ts', "export { a } from '../workspace/read-file.js';\nexport type X = 1;\n");
  write('routes/r.ts', "import '../plugins/p.js';\n");
  write('plugins/p.ts', "import '../routes/r.js';\n");
  const found = projectImports(root);
  t.same(
    brokenFloors(found)
      .map(({ rooms, typeOnly }) => `${rooms}${typeOnly ? ' (type)' : ''}`)
      .sort(),
    ['core/sandbox -> core/workspace', 'core/workspace -> core/turns (type)', 'routes -> plugins'],
  );
  t.same(
    fileCycles(found)
      .map((cycle) => cycle.length)
      .sort(),
    [2, 4],
    'routes/r.ts and plugins/p.ts import each other; read-file, turn, plan and x go round, a type and a re-export on the way',
  );
});
