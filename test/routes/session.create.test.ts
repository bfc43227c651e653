import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`session.create (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('creates a durable session over an existing directory', async (t) => {
      const client = await daemon.connect(transport);
      const created = await client.call(
        'session.create',
        { workspace: `${daemon.workspace}/`, title: 'Notes' },
        { operation: op() },
      );
      t.match(created.session_id, /^ses_[A-Za-z0-9_-]{22}$/);
      t.equal(created.workspace, daemon.workspace, 'the workspace is normalized');
      t.ok(daemon.app.history.session(created.session_id as string));
    });

    t.test(
      'a workspace that is relative, missing or a file is invalid_payload and creates nothing',
      async (t) => {
        const client = await daemon.connect(transport);
        const before = daemon.app.history.countSessions();
        const file = join(daemon.workspace, 'file.txt');
        writeFileSync(file, 'x');
        for (const workspace of ['relative/dir', join(daemon.workspace, 'missing'), file, '']) {
          const refused = await client.request(
            'session.create',
            { workspace, title: null },
            { operation: op() },
          );
          t.equal(refused.error?.code, 'invalid_payload', `${workspace} refused`);
          t.notMatch(refused.error?.message ?? '', daemon.workspace, 'the error does not echo the path');
        }
        t.equal(daemon.app.history.countSessions(), before);
      },
    );

    t.test(
      'a workspace no sandbox could confine is invalid_payload: the root, the home, inside it, a link to either',
      async (t) => {
        const client = await daemon.connect(transport);
        const before = daemon.app.history.countSessions();
        const inside = join(daemon.home, 'state');
        const toRoot = join(daemon.workspace, 'to-root');
        const toHome = join(daemon.workspace, 'to-home');
        mkdirSync(inside, { recursive: true });
        symlinkSync('/', toRoot);
        symlinkSync(daemon.home, toHome);
        const cases = [
          ['/', 'the workspace cannot be the filesystem root'],
          ['/usr/..', 'the workspace cannot be the filesystem root'],
          [toRoot, 'the workspace cannot be the filesystem root'],
          [daemon.home, "the workspace cannot be the daemon's home or lie inside it"],
          [inside, "the workspace cannot be the daemon's home or lie inside it"],
          [toHome, "the workspace cannot be the daemon's home or lie inside it"],
        ] as const;
        for (const [workspace, message] of cases) {
          const refused = await client.request(
            'session.create',
            { workspace, title: null },
            { operation: op() },
          );
          t.same(refused.error, { code: 'invalid_payload', message }, `${workspace} refused`);
        }
        t.equal(daemon.app.history.countSessions(), before, 'nothing was created');
        const beside = join(daemon.workspace, 'home-sibling');
        mkdirSync(beside);
        await client.call('session.create', { workspace: beside, title: null }, { operation: op() });
        t.equal(daemon.app.history.countSessions(), before + 1, 'a folder beside the home is a workspace');
      },
    );

    t.test('a title over 512 bytes is invalid_payload', async (t) => {
      const client = await daemon.connect(transport);
      const refused = await client.request(
        'session.create',
        { workspace: daemon.workspace, title: 'é'.repeat(257) },
        { operation: op() },
      );
      t.equal(refused.error?.code, 'invalid_payload');
    });

    t.test('an operation id is required and cannot be reused', async (t) => {
      const client = await daemon.connect(transport);
      const operation = op();
      await client.call('session.create', { workspace: daemon.workspace, title: null }, { operation });
      const reused = await client.request(
        'session.create',
        { workspace: daemon.workspace, title: null },
        { operation },
      );
      t.equal(reused.error?.code, 'operation_already_known');
      const other = await client.request('session.list', { cursor: null, limit: 1 }, { operation });
      t.equal(other.error?.code, 'invalid_request', 'a read carries no operation id');
    });
  });
}
