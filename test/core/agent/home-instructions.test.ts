import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { readHomeInstructions } from '../../../core/agent/home-instructions.js';
import { INSTRUCTIONS_LIMITS } from '../../../core/agent/instructions-limits.js';

const BYTES = INSTRUCTIONS_LIMITS.file_bytes;

t.test('no home or no file is absent; white space is empty', async (t) => {
  t.same(readHomeInstructions(join(t.testdir(), 'missing')), {
    text: '',
    state: { state: 'absent', bytes: 0, reason: null, linked: false },
  });
  const home = t.testdir();
  t.match(readHomeInstructions(home), { text: '', state: { state: 'absent' } });
  writeFileSync(join(home, 'AGENTS.md'), ' \n\t\n');
  t.same(readHomeInstructions(home), {
    text: '',
    state: { state: 'empty', bytes: 0, reason: null, linked: false },
  });
});

t.test('a file is used whole up to file_bytes, a byte-order mark dropped', async (t) => {
  const home = t.testdir({ 'AGENTS.md': '\uFEFFAnswer in English.\n' });
  t.same(readHomeInstructions(home), {
    text: 'Answer in English.\n',
    state: { state: 'used', bytes: 19, reason: null, linked: false },
  });
  writeFileSync(join(home, 'AGENTS.md'), 'r'.repeat(BYTES));
  t.same(readHomeInstructions(home).state, { state: 'used', bytes: BYTES, reason: null, linked: false });
});

t.test('one byte past file_bytes and a 34.5 KB file: the first file_bytes are used, cut', async (t) => {
  const home = t.testdir();
  writeFileSync(join(home, 'AGENTS.md'), `${'r'.repeat(BYTES)}!`);
  t.same(readHomeInstructions(home), {
    text: 'r'.repeat(BYTES),
    state: { state: 'cut', bytes: BYTES, reason: null, linked: false },
  });
  const real = `${'Keep commits small. '.repeat(1_724)}end`;
  writeFileSync(join(home, 'AGENTS.md'), real);
  t.equal(Buffer.byteLength(real), 34_483);
  t.same(readHomeInstructions(home), {
    text: real.slice(0, BYTES),
    state: { state: 'cut', bytes: BYTES, reason: null, linked: false },
  });
});

t.test('a symbolic link, a folder or a binary file is refused, by its code only', async (t) => {
  const home = t.testdir({ elsewhere: 'secret-rules-2f9a' });
  symlinkSync(join(home, 'elsewhere'), join(home, 'AGENTS.md'));
  t.same(readHomeInstructions(home), {
    text: '',
    state: { state: 'refused', bytes: 0, reason: 'symlink', linked: false },
  });
  const folder = t.testdir();
  mkdirSync(join(folder, 'AGENTS.md'));
  t.match(readHomeInstructions(folder).state, { state: 'refused', reason: 'not_regular_file' });
  const binary = t.testdir({ 'AGENTS.md': Buffer.from([0xff, 0xfe, 0x00]) });
  t.match(readHomeInstructions(binary).state, { state: 'refused', reason: 'binary_file' });
});
