import t from 'tap';
import type { SettingsDocument } from '../../../core/configuration/model-settings.js';
import { SettingsStore } from '../../../core/configuration/settings-store.js';

class Invalid extends Error {}

/** A settings file in memory whose reads and writes the test can hold. */
function fileStore(initial: SettingsDocument | 'invalid') {
  let content: SettingsDocument | 'invalid' = initial;
  let heldRead: ((release: () => void) => void) | null = null;
  const writes: SettingsDocument[] = [];
  const store = new SettingsStore({
    document: initial === 'invalid' ? null : initial,
    defaultModel: 'startup',
    maxPins: 4,
    persistence: {
      read: async () => {
        const seen = content;
        if (heldRead) {
          const hold = heldRead;
          heldRead = null;
          await new Promise<void>((resolve) => hold(resolve));
        }
        if (seen === 'invalid') throw new Invalid();
        return seen;
      },
      write: async (document) => {
        writes.push(document);
        content = document;
      },
      isInvalid: (error) => error instanceof Invalid,
    },
  });
  return {
    store,
    writes,
    set: (next: SettingsDocument | 'invalid') => (content = next),
    holdNextRead: (hold: (release: () => void) => void) => (heldRead = hold),
  };
}

const CATALOG = { has: (id: string) => id.startsWith('model-') };

t.test('a reload that read before a write never replaces what the write put in memory', async (t) => {
  const file = fileStore({ model: 'model-old' });
  let release: () => void = () => {};
  file.holdNextRead((resume) => (release = resume));
  const reload = file.store.reload();
  await file.store.update({ kind: 'global' }, { model: 'model-new' }, CATALOG);
  release();
  await reload;
  t.equal(file.store.selection(null)?.model, 'model-new');
});

t.test(
  'an invalid file selects the defaults, is refused to readers and writers, and never written',
  async (t) => {
    const file = fileStore('invalid');
    t.same(file.store.selection(null), { model: 'startup', reasoningEffort: null, fast: false });
    await t.rejects(file.store.view(null), { code: 'conflict' });
    await t.rejects(file.store.update({ kind: 'global' }, { fast: true }, CATALOG), { code: 'conflict' });
    t.same(file.writes, []);
    file.set({ fast: true });
    await file.store.reload();
    t.equal(file.store.selection(null)?.fast, true, 'a fixed file is used again');
    file.set('invalid');
    await t.rejects(file.store.update({ kind: 'global' }, { fast: false }, CATALOG), { code: 'conflict' });
    t.equal(file.store.selection(null)?.fast, false, 'a file that became invalid selects the defaults');
  },
);

t.test('a model outside the catalog is refused before anything is written', async (t) => {
  const file = fileStore({});
  await t.rejects(file.store.update({ kind: 'global' }, { model: 'other' }, CATALOG), {
    code: 'conflict',
    message: 'the model is not in the catalog; refresh it first',
  });
  t.same(file.writes, []);
  t.same(
    await file.store.update({ kind: 'global' }, { model: null }, CATALOG),
    {
      global: { model: null, reasoning_effort: null, fast: null },
      project: null,
      effective: { model: 'startup', reasoning_effort: null, fast: false },
    },
    'removing a model needs no catalog',
  );
});

t.test('no model anywhere selects nothing', async (t) => {
  const store = new SettingsStore({
    document: {},
    defaultModel: null,
    maxPins: 1,
    persistence: { read: async () => ({}), write: async () => {}, isInvalid: () => false },
  });
  t.equal(store.selection('/ws'), null);
});
