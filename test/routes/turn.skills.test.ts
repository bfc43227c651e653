import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import t, { type Test } from 'tap';
import { BUILTIN_LIMITS } from '../../core/agent/builtin-limits.js';
import { parseSkillFile } from '../../core/skills/front-matter.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

/** A copy of a skill in the shape public collections publish: front matter, a body, reference/ and scripts/. */
const FIXTURE = fileURLToPath(new URL('../fixtures/skills/csv-reports', import.meta.url));
const SKILL_FILE = readFileSync(join(FIXTURE, 'SKILL.md'), 'utf8');
const parsed = parseSkillFile(SKILL_FILE, 'csv-reports');
if ('refused' in parsed) throw new Error('the fixture skill does not parse');
const { description: DESCRIPTION, body: BODY } = parsed;

interface ChatMessage {
  role: string;
  content: string;
  tool_call_id?: string;
}

interface Scene {
  daemon: TestDaemon;
  provider: ScriptedProvider;
  logs: Array<Record<string, unknown>>;
}

/** A home whose skills/ holds the fixture as a cloned collection does (`<collection>/skills/<name>/`). */
async function scene(t: Test, place: (skills: string, root: string) => void): Promise<Scene> {
  const root = mkdtempSync(join(tmpdir(), 'magid-skills-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  mkdirSync(join(home, 'skills'), { recursive: true });
  place(join(home, 'skills'), root);
  const provider = await ScriptedProvider.start(t);
  const logs: Array<Record<string, unknown>> = [];
  const daemon = await startDaemon(t, {
    home,
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
  });
  return { daemon, provider, logs };
}

const asCollection = (skills: string) => {
  cpSync(FIXTURE, join(skills, 'acme-skills', 'skills', 'csv-reports'), { recursive: true });
  writeFileSync(join(skills, 'acme-skills', 'README.md'), '# Acme skills\n');
};

/** The tool messages of a provider request, by the call id they answer, parsed. */
function toolResults(body: { messages: ChatMessage[] }): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    body.messages
      .filter((message) => message.role === 'tool')
      .map((message) => [message.tool_call_id, JSON.parse(message.content)]),
  );
}

const loadSkill = (id: string, args: Record<string, unknown>) => ({
  id,
  name: 'load_skill',
  arguments: JSON.stringify({ name: 'csv-reports', ...args }),
});

t.test(
  'a real skill of a cloned collection: its 1,000-character description in the index, its 40 KB text and its bundled files reach the model',
  async (t) => {
    t.equal([...DESCRIPTION].length, 1_000, 'the fixture: a 1,000-character description');
    t.ok(Buffer.byteLength(BODY) > 40_000, 'and a body over 40 KB');
    const { daemon, provider, logs } = await scene(t, asCollection);
    provider.replyToolCalls([loadSkill('s1', {})]);
    provider.replyToolCalls([
      loadSkill('w1', { offset: 0, length: 16_384 }),
      loadSkill('w2', { offset: 16_384, length: 16_384 }),
      loadSkill('w3', { offset: 32_768 }),
      loadSkill('f1', { path: 'reference/formats.md' }),
      loadSkill('f2', { path: 'scripts/check_report.py' }),
      loadSkill('f3', { path: '../../README.md' }),
    ]);
    provider.reply(['Report written.']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'Summarise sales.csv by month.' }));
    t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });

    const system = provider.requests[0]!.body.messages[0] as ChatMessage;
    t.equal(system.role, 'system');
    t.ok(system.content.includes(`\n- csv-reports: ${DESCRIPTION}`), 'the whole description in the index');
    t.notOk(system.content.includes(BODY.slice(0, 200)), 'the text is not in the system message');

    const first = toolResults(provider.requests[1]!.body).s1!;
    t.match(first, {
      name: 'csv-reports',
      description: DESCRIPTION,
      files: [
        { path: 'LICENSE.txt', size: Buffer.byteLength(readFileSync(join(FIXTURE, 'LICENSE.txt'))) },
        { path: 'reference/formats.md' },
        { path: 'scripts/check_report.py' },
      ],
      files_truncated: false,
      size: Buffer.byteLength(BODY),
      offset: 0,
    });
    t.ok(BODY.startsWith(first.content as string), 'the first window of the text');
    t.ok((first.next_offset as number) > 30_000, 'as much as the output bound allows');
    t.ok(
      Buffer.byteLength(provider.requests[1]!.body.messages.at(-1).content) <= BUILTIN_LIMITS.output_bytes,
    );

    const results = toolResults(provider.requests[2]!.body);
    const windows = ['w1', 'w2', 'w3'].map((id) => results[id]!);
    t.same(
      windows.map((window) => [window.offset, window.next_offset]),
      [
        [0, 16_384],
        [16_384, 32_768],
        [32_768, null],
      ],
    );
    t.equal(windows.map((window) => window.content).join(''), BODY, 'the windows join to the whole text');
    t.same(results.f1, {
      name: 'csv-reports',
      path: 'reference/formats.md',
      size: Buffer.byteLength(readFileSync(join(FIXTURE, 'reference', 'formats.md'))),
      offset: 0,
      length: Buffer.byteLength(readFileSync(join(FIXTURE, 'reference', 'formats.md'))),
      content: readFileSync(join(FIXTURE, 'reference', 'formats.md'), 'utf8'),
      next_offset: null,
    });
    t.equal(results.f2!.content, readFileSync(join(FIXTURE, 'scripts', 'check_report.py'), 'utf8'));
    t.match(results.f3, { error: { code: 'invalid_path' } }, 'a path out of the folder is refused');

    t.match(
      logs.filter((entry) => entry.msg === 'an entry of the skills folder is not used'),
      [{ entry: 'acme-skills/README.md', reason: 'not_a_skill' }],
    );
    const status = await who.client.call('status');
    t.same(status.skills, {
      loaded: ['csv-reports'],
      skipped: [{ path: 'acme-skills/README.md', reason: 'not_a_skill' }],
      omitted: 0,
    });
  },
);

t.test(
  'a skill folder linked from a clone outside the home is followed and its files read there',
  async (t) => {
    const { daemon, provider } = await scene(t, (skills, root) => {
      cpSync(FIXTURE, join(root, 'clone', 'csv-reports'), { recursive: true });
      symlinkSync(join(root, 'clone', 'csv-reports'), join(skills, 'csv-reports'));
      symlinkSync(join(root, 'home'), join(skills, 'home'));
    });
    provider.replyToolCalls([loadSkill('f1', { path: 'reference/formats.md' })]);
    provider.reply(['ok']);
    const who = await controller(daemon, 'in-process');
    resultOf(await startTurn(who, { prompt: 'go' }));
    await who.client.event('turn.terminal');
    t.equal(
      toolResults(provider.requests[1]!.body).f1!.content,
      readFileSync(join(FIXTURE, 'reference', 'formats.md'), 'utf8'),
    );
    t.same((await who.client.call('status')).skills, {
      loaded: ['csv-reports'],
      skipped: [{ path: 'home', reason: 'link_daemon_home' }],
      omitted: 0,
    });
  },
);
