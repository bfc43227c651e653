import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { mountedAt, mountSlowFilesystem, slowFilesystemUnavailable } from './slow-filesystem.js';

const unavailable = slowFilesystemUnavailable();
const CONTRACT = '{"input_schema":{"type":"object","additionalProperties":false}}\n';
const GUIDE = 'Prüfe jede Angabe zweimal.\r\nCite the file you read.\n';

t.test(
  'a held read finishes only after release, with the exact bytes',
  { skip: unavailable ?? false },
  async (t) => {
    const slow = await mountSlowFilesystem(t, [
      { name: 'contract.json', content: CONTRACT },
      { name: 'guide.md', content: GUIDE },
    ]);
    t.ok(mountedAt(slow.root), 'mounted at its root');

    let settled = false;
    const reading = readFile(join(slow.root, 'guide.md')).finally(() => {
      settled = true;
    });
    t.equal(await slow.waitForRead(), 'guide.md', 'the server reports the held read');

    // Each of these is a request the server answers while the read stays held.
    const guide = await stat(join(slow.root, 'guide.md'), { bigint: true });
    const contract = await stat(join(slow.root, 'contract.json'), { bigint: true });
    t.equal(guide.mode, 0o100644n, 'a regular file, mode 0644');
    t.equal(guide.nlink, 1n, 'one link');
    t.equal(guide.size, BigInt(Buffer.byteLength(GUIDE)));
    t.not(guide.ino, contract.ino, 'each file has its own inode');
    t.same((await readdir(slow.root)).sort(), ['contract.json', 'guide.md']);
    await t.rejects(stat(join(slow.root, 'missing.md')), { code: 'ENOENT' });
    t.notOk(settled, 'the read is still held');

    t.equal(await slow.release(), 1, 'release answers the held read');
    t.same(await reading, Buffer.from(GUIDE, 'utf8'), 'the bytes are exact');

    const again = readFile(join(slow.root, 'contract.json'), 'utf8');
    t.equal(await slow.waitForRead(), 'contract.json', 'every read is held, not only the first');
    t.equal(await slow.release(), 1);
    t.equal(await again, CONTRACT);
    const later = await stat(join(slow.root, 'guide.md'), { bigint: true });
    t.same(
      [later.ino, later.mtimeNs, later.ctimeNs],
      [guide.ino, guide.mtimeNs, guide.ctimeNs],
      'inode and times are stable',
    );

    await t.rejects(
      open(join(slow.root, 'guide.md'), 'r+'),
      { code: 'EROFS' },
      'opening for write is refused',
    );
    await t.rejects(open(join(slow.root, 'guide.md'), 'w'), { code: 'EROFS' });

    await slow.close();
    t.notOk(mountedAt(slow.root), 'nothing is mounted after close');
    t.notOk(existsSync(slow.root), 'the mount point is removed');
  },
);

t.test(
  'a never-answered read outlasts release; an interrupted reader is let go; close fails a waiting read',
  { skip: unavailable ?? false },
  async (t) => {
    const slow = await mountSlowFilesystem(t, [{ name: 'stuck.md', content: 'Never read.', never: true }]);
    const path = join(slow.root, 'stuck.md');

    const reader = spawn('python3', ['-c', 'import sys; open(sys.argv[1], "rb").read()', path], {
      stdio: 'ignore',
    });
    const readerExit = new Promise<NodeJS.Signals | null>((resolve) =>
      reader.once('exit', (_code, signal) => resolve(signal)),
    );
    t.teardown(() => {
      reader.kill('SIGKILL');
    });
    t.equal(await slow.waitForRead(), 'stuck.md');
    t.equal(await slow.release(), 0, 'release leaves a never-answered read held');
    t.equal(reader.exitCode, null, 'the reader still waits');
    t.equal(reader.signalCode, null);

    reader.kill('SIGKILL');
    t.equal(await slow.waitForInterrupt(), 'stuck.md', 'the kernel interrupts the read of a killed reader');
    t.equal(await readerExit, 'SIGKILL', 'and the reader dies');

    let failed = false;
    const waiting = readFile(path).catch((error: NodeJS.ErrnoException) => {
      failed = true;
      return error.code;
    });
    t.equal(await slow.waitForRead(), 'stuck.md');
    t.notOk(failed, 'the read waits');
    await slow.close();
    t.match(await waiting, /^(ENOTCONN|ECONNABORTED)$/, 'stopping the server fails the read');
    t.notOk(mountedAt(slow.root), 'nothing is mounted after close');
  },
);
