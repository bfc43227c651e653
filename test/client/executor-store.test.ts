import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { type ExecutorRecord, ExecutorStoreError, fileStore } from '../../client/executor-store.js';

const RECORD: ExecutorRecord = {
  version: 1,
  instance_id: 'inst_a',
  executor_id: 'exe_a',
  executor_generation: 3,
  resume_secret: 's'.repeat(43),
  candidate_secret: null,
  calls: [],
  turns: [{ session_id: 'ses_a', turn_id: 'turn_a' }],
};

function folder(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'magi-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test(
  'a file store keeps the record in one private file, written whole, and removes it when nothing is kept',
  async (t) => {
    const dir = folder(t);
    const path = join(dir, 'app', 'executor.json');
    const store = fileStore(path);
    t.equal(await store.load(), null, 'nothing kept yet');
    await store.save(RECORD);
    t.same(await store.load(), RECORD);
    t.equal(statSync(path).mode & 0o777, 0o600, 'the file is private');
    t.equal(statSync(join(dir, 'app')).mode & 0o777, 0o700, 'and so is the folder it made');
    t.same(readdirSync(join(dir, 'app')), ['executor.json'], 'no temporary is left beside it');
    await store.save({ ...RECORD, executor_generation: 4 });
    t.equal(JSON.parse(readFileSync(path, 'utf8')).executor_generation, 4, 'replaced whole');
    await store.save(null);
    t.same(readdirSync(join(dir, 'app')), [], 'removed');
    t.equal(await store.load(), null);
    await store.save(null);
    t.pass('removing what is not there is no error');
  },
);

t.test('a file that is not a record is refused with a fixed error, never its content', async (t) => {
  const dir = folder(t);
  for (const text of ['{', '[]', '{"version":2}', JSON.stringify({ ...RECORD, calls: null }), 'null']) {
    const path = join(dir, 'executor.json');
    writeFileSync(path, text);
    await t.rejects(fileStore(path).load(), ExecutorStoreError, text);
    await t.rejects(fileStore(path).load(), {
      message: 'the executor store does not hold an executor record',
    });
  }
});
