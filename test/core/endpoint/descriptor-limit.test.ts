import { execFileSync } from 'node:child_process';
import t from 'tap';
import {
  connectionCapacity,
  DESCRIPTOR_RESERVE,
  openFilesLimit,
  parseOpenFilesLimit,
} from '../../../core/endpoint/descriptor-limit.js';
import { SERVICE_LIMITS } from '../../../core/limits.js';

const LIMITS_TEXT = (soft: string, hard: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max stack size            8388608              unlimited            bytes     ',
    'Max processes             96364                96364                processes ',
    `Max open files            ${soft.padEnd(21)}${hard.padEnd(21)}files     `,
    'Max locked memory         8388608              8388608              bytes     ',
    '',
  ].join('\n');

t.test('the soft limit is read from the "Max open files" row', async (t) => {
  t.equal(parseOpenFilesLimit(LIMITS_TEXT('1024', '4096')), 1024);
  t.equal(parseOpenFilesLimit(LIMITS_TEXT('300', '300')), 300);
  t.equal(parseOpenFilesLimit(LIMITS_TEXT('unlimited', 'unlimited')), null, 'unlimited sets no bound');
  t.equal(parseOpenFilesLimit('Max processes 100 100 processes\n'), null, 'no such row');
  t.equal(parseOpenFilesLimit(''), null);
  t.equal(parseOpenFilesLimit(LIMITS_TEXT('99999999999999999999', '1')), null, 'not a safe integer');
});

t.test('a limits file that cannot be read gives no limit instead of an error', async (t) => {
  t.equal(
    openFilesLimit(() => {
      throw Object.assign(new Error('no /proc'), { code: 'ENOENT' });
    }),
    null,
  );
  t.equal(
    openFilesLimit(() => LIMITS_TEXT('2048', '2048')),
    2048,
    'the reader is what decides',
  );
});

t.test(
  "this process's own limit is the one a child shell inherits from it",
  { skip: process.platform !== 'linux' && 'reads /proc, which only Linux has' },
  async (t) => {
    const inherited = execFileSync('/bin/sh', ['-c', 'ulimit -Sn'], { encoding: 'utf8' }).trim();
    t.equal(openFilesLimit(), inherited === 'unlimited' ? null : Number(inherited));
  },
);

t.test('the wire bound is served when the limit leaves room for it and the reserve', async (t) => {
  const wanted = SERVICE_LIMITS.connections + DESCRIPTOR_RESERVE;
  for (const openFiles of [null, 20_000, wanted]) {
    t.strictSame(
      connectionCapacity(openFiles),
      {
        connections: SERVICE_LIMITS.connections,
        openFilesLimit: openFiles,
        openFilesWanted: wanted,
        narrowed: false,
      },
      `open files ${openFiles}`,
    );
  }
});

t.test('a lower limit narrows the connections to what it leaves beside the reserve', async (t) => {
  const wanted = SERVICE_LIMITS.connections + DESCRIPTOR_RESERVE;
  t.strictSame(connectionCapacity(wanted - 1), {
    connections: SERVICE_LIMITS.connections - 1,
    openFilesLimit: wanted - 1,
    openFilesWanted: wanted,
    narrowed: true,
  });
  t.equal(connectionCapacity(300).connections, 300 - DESCRIPTOR_RESERVE);
  t.equal(connectionCapacity(DESCRIPTOR_RESERVE).connections, 1, 'at least one is always served');
  t.equal(connectionCapacity(0).connections, 1);
});
