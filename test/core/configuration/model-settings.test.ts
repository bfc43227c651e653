import t from 'tap';
import {
  applySettingsChanges,
  effectiveSelection,
  projectKey,
  type SettingsDocument,
} from '../../../core/configuration/model-settings.js';

const DOCUMENT: SettingsDocument = {
  model: 'global-model',
  fast: true,
  unknown: { kept: true },
  projects: { '/a': { model: 'a-model', note: 'kept' }, '/b': { reasoning_effort: 'high' } },
};

t.test(
  'the selection: the pin, then the global settings, then the startup model; fast is global',
  async (t) => {
    t.same(effectiveSelection(DOCUMENT, '/a', 'startup'), {
      model: 'a-model',
      reasoning_effort: null,
      fast: true,
    });
    t.same(effectiveSelection(DOCUMENT, '/b', 'startup'), {
      model: 'global-model',
      reasoning_effort: 'high',
      fast: true,
    });
    t.same(effectiveSelection({}, null, 'startup'), {
      model: 'startup',
      reasoning_effort: null,
      fast: false,
    });
    t.same(effectiveSelection({}, '/a', null).model, null);
    t.same(
      effectiveSelection({ projects: { '/c': { fast: false } as never } }, '/c', null).fast,
      false,
      'a pin cannot switch fast mode',
    );
  },
);

t.test('a write changes only what it names and returns a new document', async (t) => {
  const global = applySettingsChanges(
    DOCUMENT,
    { kind: 'global' },
    { model: null, reasoning_effort: 'low' },
    10,
  );
  t.same(global, {
    fast: true,
    unknown: { kept: true },
    projects: DOCUMENT.projects,
    reasoning_effort: 'low',
  });
  t.equal(DOCUMENT.model, 'global-model', 'the input is not changed');
  const pinned = applySettingsChanges(DOCUMENT, { kind: 'project', workspace: '/a' }, { model: null }, 10);
  t.same(pinned.projects, { '/a': { note: 'kept' }, '/b': { reasoning_effort: 'high' } });
  const emptied = applySettingsChanges(
    DOCUMENT,
    { kind: 'project', workspace: '/b' },
    { reasoning_effort: null },
    10,
  );
  t.same(emptied.projects, { '/a': { model: 'a-model', note: 'kept' } });
  const none = applySettingsChanges({}, { kind: 'project', workspace: '/z' }, { model: null }, 10);
  t.same(none, {}, 'removing from a pin that does not exist adds nothing');
  const kept = applySettingsChanges(
    { projects: { '/z': { model: 'm' } } },
    { kind: 'project', workspace: '/z' },
    { model: null },
    10,
  );
  t.same(kept, { projects: {} }, 'an existing projects member stays');
});

t.test('refusals', async (t) => {
  t.throws(() => applySettingsChanges(DOCUMENT, { kind: 'project', workspace: '/a' }, { fast: true }, 10), {
    code: 'invalid_payload',
    message: 'fast mode is a global setting',
  });
  t.throws(() => applySettingsChanges(DOCUMENT, { kind: 'global' }, {}, 10), { code: 'invalid_payload' });
  t.throws(() => applySettingsChanges(DOCUMENT, { kind: 'project', workspace: '/new' }, { model: 'm' }, 2), {
    code: 'limit_exceeded',
  });
  t.ok(applySettingsChanges(DOCUMENT, { kind: 'project', workspace: '/a' }, { model: 'm' }, 2));
});

t.test('a project is keyed by its normalized absolute path', async (t) => {
  t.equal(projectKey('/srv/notes/', 100), '/srv/notes');
  t.equal(projectKey('/srv/./x/../notes', 100), '/srv/notes');
  t.equal(projectKey('/', 100), '/');
  for (const bad of ['notes', './notes', '/a\0b', `/${'x'.repeat(100)}`]) {
    t.throws(() => projectKey(bad, 100), { code: 'invalid_payload' }, JSON.stringify(bad));
  }
});
