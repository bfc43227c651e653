import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  daemonRecordPath,
  readDaemonRecord,
  removeDaemonRecord,
  writeDaemonRecord,
} from '../../config/daemon-record.js';

const RECORD = {
  pid: process.pid,
  socket: '/tmp/app/d.sock',
  instance_id: 'inst_a',
  home_id: '0123456789abcdef',
};

t.test('a record written is read back while its pid lives', async (t) => {
  const home = t.testdir({});
  await writeDaemonRecord(home, RECORD);
  t.strictSame(await readDaemonRecord(home), RECORD);
});

t.test('a missing, malformed or dead record reads as no daemon', async (t) => {
  const home = t.testdir({});
  t.equal(await readDaemonRecord(home), null, 'missing');
  mkdirSync(join(home, 'run'));
  for (const text of ['{', '[]', '{"pid":"1"}', JSON.stringify({ ...RECORD, socket: 'relative.sock' })]) {
    writeFileSync(daemonRecordPath(home), text);
    t.equal(await readDaemonRecord(home), null, `malformed: ${text.slice(0, 20)}`);
  }
  // A process that has exited: its pid is free (and not reused this soon).
  const dead = spawnSync(process.execPath, [
    '-e',
    'process.stdout.write(String(process.pid))',
  ]).stdout.toString();
  writeFileSync(daemonRecordPath(home), JSON.stringify({ ...RECORD, pid: Number(dead) }));
  t.equal(await readDaemonRecord(home), null, 'a dead pid');
});

t.test('a stop removes its own record and leaves a later daemon’s alone', async (t) => {
  const home = t.testdir({});
  await writeDaemonRecord(home, RECORD);
  removeDaemonRecord(home, 'inst_other');
  t.ok(existsSync(daemonRecordPath(home)), 'another instance’s record stays');
  removeDaemonRecord(home, 'inst_a');
  t.notOk(existsSync(daemonRecordPath(home)), 'its own is removed');
  t.doesNotThrow(() => removeDaemonRecord(home, 'inst_a'), 'removing a missing record is nothing');
});
