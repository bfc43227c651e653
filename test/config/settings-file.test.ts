import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  parseSettings,
  readSettingsFile,
  SettingsFileError,
  writeSettingsFile,
} from '../../config/settings-file.js';

const SECRET = 'sk-do-not-echo-8a2d';

t.test('every field is kept, known or not', async (t) => {
  const text = JSON.stringify({
    model: 'm',
    reasoning_effort: 'low',
    fast: false,
    projects: { '/ws': { model: 'p', other: 1 } },
    theme: { dark: true },
  });
  t.same(parseSettings(text), JSON.parse(text));
});

t.test('a missing file is empty; a written one is private and read back', async (t) => {
  const home = join(t.testdir(), 'home');
  t.same(await readSettingsFile(home), {});
  await writeSettingsFile(home, { fast: true, keep: [1] });
  t.equal(statSync(join(home, 'settings.json')).mode & 0o777, 0o600);
  t.same(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')), { fast: true, keep: [1] });
  t.same(await readSettingsFile(home), { fast: true, keep: [1] });
});

t.test('refusals name the field, never a value or a workspace path', async (t) => {
  const cases: Array<[string, string, string | null]> = [
    [`{"model": "${SECRET}`, 'settings.json: is not valid JSON', null],
    ['[1]', 'settings.json: is not a JSON object', ''],
    [`{"keep": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`, 'settings.json: is nested too deeply', ''],
    [`{"model": "${SECRET} with space"}`, 'settings.json: /model is not valid', '/model'],
    ['{"fast": "yes"}', 'settings.json: /fast is not valid', '/fast'],
    ['{"reasoning_effort": "max"}', 'settings.json: /reasoning_effort is not valid', '/reasoning_effort'],
    [`{"projects": {"/home/${SECRET}": {"model": 3}}}`, 'settings.json: /projects is not valid', '/projects'],
  ];
  for (const [text, message, pointer] of cases) {
    const error = (() => {
      try {
        parseSettings(text);
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    t.type(error, SettingsFileError);
    t.match(error, { message, pointer }, text);
    t.notMatch(String((error as Error).message), SECRET);
  }
});
