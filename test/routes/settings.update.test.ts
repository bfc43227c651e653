import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { catalogDaemon, listing } from './catalog.fixture.js';
import { codeOf } from './session.resources.fixture.js';

const PROJECT = '/srv/projects/notes';

function update(client: WireClient, workspace: string | null, changes: Record<string, unknown>) {
  return client.request('settings.update', { workspace, changes }, { operation: op() });
}

function fileOf(home: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'));
}

/** A settings file another tool wrote: fields the daemon does not know, and another project's pin. */
const FOREIGN = {
  theme: 'dark',
  model: 'model-a',
  projects: {
    '/srv/projects/other': { model: 'model-a', reasoning_effort: 'low', note: 'kept' },
  },
  nested: { anything: [1, 2, 3] },
};

for (const transport of TRANSPORTS) {
  t.test(`settings.update (${transport})`, async (t) => {
    t.test('a global write of a catalog model, effort and fast mode', async (t) => {
      const { daemon, provider } = await catalogDaemon(t, { model: 'startup-model' });
      provider.replyModels(listing(['model-a', 'model-b']));
      const client = await daemon.connect(transport);
      t.equal(
        codeOf(await update(client, null, { model: 'model-a' })),
        'conflict',
        'a model is checked against the catalog, empty before a refresh',
      );
      await client.call('catalog.refresh', {}, { operation: op() });
      const answer = await update(client, null, { model: 'model-a', reasoning_effort: 'high', fast: true });
      t.same(answer.result, {
        global: { model: 'model-a', reasoning_effort: 'high', fast: true },
        project: null,
        effective: { model: 'model-a', reasoning_effort: 'high', fast: true },
      });
      t.same(fileOf(daemon.home), { model: 'model-a', reasoning_effort: 'high', fast: true });
      t.equal(statSync(join(daemon.home, 'settings.json')).mode & 0o777, 0o600);
      t.same((await update(client, null, { model: 'model-c' })).error, {
        code: 'conflict',
        message: 'the model is not in the catalog; refresh it first',
      });
      const cleared = await update(client, null, { model: null, reasoning_effort: null, fast: null });
      t.same(cleared.result, {
        global: { model: null, reasoning_effort: null, fast: null },
        project: null,
        effective: { model: 'startup-model', reasoning_effort: null, fast: false },
      });
      t.same(fileOf(daemon.home), {});
    });

    t.test('a project pin keeps unknown fields, the global settings and the other pins', async (t) => {
      const home = t.testdir({ 'settings.json': JSON.stringify(FOREIGN) });
      const { daemon, provider } = await catalogDaemon(t, { home });
      provider.replyModels(listing(['model-a', 'model-b']));
      const client = await daemon.connect(transport);
      await client.call('catalog.refresh', {}, { operation: op() });
      const pinned = await update(client, `${PROJECT}/`, { model: 'model-b', reasoning_effort: 'minimal' });
      t.same(pinned.result, {
        global: { model: 'model-a', reasoning_effort: null, fast: null },
        project: { model: 'model-b', reasoning_effort: 'minimal' },
        effective: { model: 'model-b', reasoning_effort: 'minimal', fast: false },
      });
      t.same(fileOf(home), {
        ...FOREIGN,
        projects: { ...FOREIGN.projects, [PROJECT]: { model: 'model-b', reasoning_effort: 'minimal' } },
      });
      await update(client, null, { model: 'model-b', fast: true });
      t.same(fileOf(home), {
        ...FOREIGN,
        model: 'model-b',
        fast: true,
        projects: { ...FOREIGN.projects, [PROJECT]: { model: 'model-b', reasoning_effort: 'minimal' } },
      });
      await update(client, PROJECT, { model: null, reasoning_effort: null });
      t.same(fileOf(home).projects, FOREIGN.projects, 'an emptied pin is removed, the others stay');
      await update(client, '/srv/projects/other', { model: null, reasoning_effort: null });
      t.same(
        fileOf(home).projects,
        { '/srv/projects/other': { note: 'kept' } },
        'a pin keeps its unknown fields',
      );
    });

    t.test('arbitrary or malformed writes are invalid_payload and change nothing', async (t) => {
      const home = t.testdir({ 'settings.json': JSON.stringify(FOREIGN) });
      const { daemon } = await catalogDaemon(t, { home });
      const client = await daemon.connect(transport);
      const before = readFileSync(join(home, 'settings.json'), 'utf8');
      const refused: Array<[string | null, Record<string, unknown>, string]> = [
        [PROJECT, { fast: true }, 'fast mode is a global setting'],
        [null, {}, 'the update changes no setting'],
        [null, { theme: 'light' }, 'the payload does not match the method schema'],
        [null, { projects: {} }, 'the payload does not match the method schema'],
        [null, { reasoning_effort: 'extreme' }, 'the payload does not match the method schema'],
        [null, { model: 'has space' }, 'the payload does not match the method schema'],
        [null, { model: 'm'.repeat(129) }, 'the payload does not match the method schema'],
        [null, { fast: 'yes' }, 'the payload does not match the method schema'],
        ['relative/path', { model: null }, 'the workspace must be an absolute path'],
      ];
      for (const [workspace, changes, message] of refused) {
        const answer = await update(client, workspace, changes);
        t.same(answer.error, { code: 'invalid_payload', message }, JSON.stringify(changes));
      }
      const extra = await client.request(
        'settings.update',
        { workspace: null, changes: { fast: true }, scope: 'global' },
        { operation: op() },
      );
      t.equal(codeOf(extra), 'invalid_payload');
      t.equal(
        codeOf(await client.request('settings.update', { workspace: null, changes: {} })),
        'invalid_request',
      );
      t.equal(readFileSync(join(home, 'settings.json'), 'utf8'), before);
    });

    t.test('a settings file the daemon cannot use is never written over', async (t) => {
      const home = t.testdir({ 'settings.json': '{"model": 42, "keep": "me"}' });
      const { daemon } = await catalogDaemon(t, { home });
      const client = await daemon.connect(transport);
      t.same((await update(client, null, { fast: true })).error, {
        code: 'conflict',
        message: 'the settings file is not valid; fix or remove it',
      });
      t.equal(readFileSync(join(home, 'settings.json'), 'utf8'), '{"model": 42, "keep": "me"}');
      writeFileSync(join(home, 'settings.json'), '{"keep": "me"}');
      t.same((await update(client, null, { fast: true })).result?.global, {
        model: null,
        reasoning_effort: null,
        fast: true,
      });
      t.same(fileOf(home), { keep: 'me', fast: true }, 'once fixed, it is written with its fields kept');
    });

    t.test('at most 256 project pins', async (t) => {
      const projects = Object.fromEntries(
        Array.from({ length: 256 }, (_, i) => [`/p/${i}`, { reasoning_effort: 'low' }]),
      );
      const home = t.testdir({ 'settings.json': JSON.stringify({ projects }) });
      const { daemon } = await catalogDaemon(t, { home });
      const client = await daemon.connect(transport);
      t.equal(codeOf(await update(client, '/p/new', { reasoning_effort: 'high' })), 'limit_exceeded');
      t.equal(
        codeOf(await update(client, '/p/7', { reasoning_effort: 'high' })),
        'ok',
        'an existing pin may change',
      );
    });
  });
}
