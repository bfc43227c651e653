import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon } from './catalog.fixture.js';
import { codeOf } from './session.resources.fixture.js';

const SETTINGS = {
  model: 'model-a',
  reasoning_effort: 'medium',
  projects: { '/srv/notes': { model: 'model-b' }, '/srv/code': { reasoning_effort: 'high', fast: true } },
};

for (const transport of TRANSPORTS) {
  t.test(`settings.get (${transport})`, async (t) => {
    t.test('without settings the startup model is the selection', async (t) => {
      const { daemon } = await catalogDaemon(t, { model: 'startup-model' });
      const client = await daemon.connect(transport);
      t.same(await client.call('settings.get', { workspace: null }), {
        global: { model: null, reasoning_effort: null, fast: null },
        project: null,
        effective: { model: 'startup-model', reasoning_effort: null, fast: false },
      });
      t.same((await client.call('settings.get', { workspace: '/srv/none' })).project, {
        model: null,
        reasoning_effort: null,
      });
    });

    t.test("a workspace's pin wins over the global settings; fast mode is global only", async (t) => {
      const home = t.testdir({ 'settings.json': JSON.stringify(SETTINGS) });
      const { daemon } = await catalogDaemon(t, { home, model: 'startup-model' });
      const client = await daemon.connect(transport);
      t.same(await client.call('settings.get', { workspace: '/srv/notes/' }), {
        global: { model: 'model-a', reasoning_effort: 'medium', fast: null },
        project: { model: 'model-b', reasoning_effort: null },
        effective: { model: 'model-b', reasoning_effort: 'medium', fast: false },
      });
      t.same(
        (await client.call('settings.get', { workspace: '/srv/code' })).effective,
        { model: 'model-a', reasoning_effort: 'high', fast: false },
        'a fast member in a pin is not a setting',
      );
    });

    t.test('reads the file as it is now', async (t) => {
      const { daemon } = await catalogDaemon(t);
      const client = await daemon.connect(transport);
      writeFileSync(join(daemon.home, 'settings.json'), JSON.stringify({ fast: true }));
      t.same((await client.call('settings.get', { workspace: null })).global, {
        model: null,
        reasoning_effort: null,
        fast: true,
      });
      writeFileSync(join(daemon.home, 'settings.json'), '{"fast": "yes"}');
      t.same((await client.request('settings.get', { workspace: null })).error, {
        code: 'conflict',
        message: 'the settings file is not valid; fix or remove it',
      });
    });

    t.test('it is a read; the workspace is an absolute path or null', async (t) => {
      const { daemon } = await catalogDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(
        codeOf(await client.request('settings.get', { workspace: null }, { operation: op() })),
        'invalid_request',
      );
      t.equal(codeOf(await client.request('settings.get', {})), 'invalid_payload');
      t.equal(codeOf(await client.request('settings.get', { workspace: 'notes' })), 'invalid_payload');
      t.equal(
        codeOf(await client.request('settings.get', { workspace: null, all: true })),
        'invalid_payload',
      );
    });
  });
}
