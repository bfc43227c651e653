import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { startModuleWorker } from '../../core/module-worker.js';
import { shortTempDir } from '../process/spawn-daemon.js';

const ECHO = new URL('./fixtures/worker-echo.ts', import.meta.url);

function firstMessage(url: URL, workerData: unknown): Promise<unknown> {
  const worker = startModuleWorker(url, workerData);
  return new Promise((resolve, reject) => {
    worker.once('message', (message) => void worker.terminate().then(() => resolve(message)));
    worker.once('error', reject);
  });
}

t.test(
  'a TypeScript module starts under the hooks MAGID_TYPESCRIPT_HOOKS names, with its workerData',
  async (t) => {
    const before = process.env.MAGID_TYPESCRIPT_HOOKS;
    t.teardown(() => {
      process.env.MAGID_TYPESCRIPT_HOOKS = before;
    });
    process.env.MAGID_TYPESCRIPT_HOOKS = new URL('./fixtures/marking-hooks.mjs', import.meta.url).href;
    t.same(await firstMessage(ECHO, { n: 1 }), { workerData: { n: 1 }, loadedBy: 'marking-hooks' });
  },
);

t.test("without MAGID_TYPESCRIPT_HOOKS a TypeScript module starts under tsx's hooks", async (t) => {
  const before = process.env.MAGID_TYPESCRIPT_HOOKS;
  t.teardown(() => {
    process.env.MAGID_TYPESCRIPT_HOOKS = before;
  });
  delete process.env.MAGID_TYPESCRIPT_HOOKS;
  t.same(await firstMessage(ECHO, 'data'), { workerData: 'data', loadedBy: 'HOOKS' });
});

t.test('a JavaScript module starts directly', async (t) => {
  const file = join(shortTempDir(t), 'echo.mjs');
  writeFileSync(
    file,
    "import { parentPort, workerData } from 'node:worker_threads'; parentPort.postMessage(workerData);",
  );
  t.same(await firstMessage(pathToFileURL(file), [1, 2]), [1, 2]);
});
