import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t, { type Test } from 'tap';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { controller, resultOf } from './session.resources.fixture.js';
import { applicationSession, startTurn } from './turn.fixture.js';

const HOME_RULES = 'Always answer in English.\n';
const WORKSPACE_RULES = 'This workspace holds tea notes.\n';
const RELEASE_NOTES =
  '---\nname: release-notes\ndescription: Write release notes from the merged changes.\n---\nGroup the changes by kind.\n';

interface ChatMessage {
  role: string;
  content: string;
}

interface Scene {
  daemon: TestDaemon;
  provider: ScriptedProvider;
  logs: Array<Record<string, unknown>>;
}

/** A home with an AGENTS.md and skills (one valid, one malformed, one symlinked), and its daemon. */
async function scene(t: Test, files: { homeRules?: string | null } = {}): Promise<Scene> {
  const root = mkdtempSync(join(tmpdir(), 'magid-instructions-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const skills = join(home, 'skills');
  mkdirSync(join(skills, 'release-notes'), { recursive: true });
  writeFileSync(join(skills, 'release-notes', 'SKILL.md'), RELEASE_NOTES);
  mkdirSync(join(skills, 'broken'));
  writeFileSync(join(skills, 'broken', 'SKILL.md'), '---\ndescription: [unclosed\n---\nsecret-body-71c2\n');
  mkdirSync(join(skills, 'linked'));
  writeFileSync(join(root, 'outside.md'), '---\ndescription: Outside.\n---\nsecret-outside-0d9e\n');
  symlinkSync(join(root, 'outside.md'), join(skills, 'linked', 'SKILL.md'));
  if (files.homeRules !== null) writeFileSync(join(home, 'AGENTS.md'), files.homeRules ?? HOME_RULES);
  const provider = await ScriptedProvider.start(t);
  const logs: Array<Record<string, unknown>> = [];
  const daemon = await startDaemon(t, {
    home,
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
  });
  return { daemon, provider, logs };
}

const systemOf = (body: { messages: ChatMessage[] }) =>
  body.messages[0]?.role === 'system' ? body.messages[0].content : null;

const INDEX =
  'Installed skills (load one with load_skill before following it):\n- release-notes: Write release notes from the merged changes.';

t.test(
  'the system message: the home AGENTS.md, the workspace AGENTS.md, the skills index, the application skills',
  async (t) => {
    const { daemon, provider, logs } = await scene(t);
    writeFileSync(join(daemon.workspace, 'AGENTS.md'), WORKSPACE_RULES);
    const { who, application } = await applicationSession(daemon, 'in-process');
    provider.reply(['ok']);
    resultOf(await startTurn(who, { prompt: 'go', application }));
    await who.client.event('turn.terminal');
    t.equal(
      systemOf(provider.requests[0]!.body),
      `${HOME_RULES}\n\n${WORKSPACE_RULES}\n\n${INDEX}\n\nAnswer briefly.`,
      'exactly these parts, in this order',
    );
    const skipped = logs.filter((entry) => entry.msg === 'an installed skill was skipped');
    t.same(
      skipped.map((entry) => [entry.skill, entry.reason]),
      [
        ['broken', 'malformed_front_matter'],
        ['linked', 'symlink'],
      ],
      'one warning per skipped skill, naming it',
    );
    t.notMatch(JSON.stringify(logs), /secret-(body|outside)/, 'never its content');
  },
);

t.test(
  'the workspace AGENTS.md is read at each turn start; a later change reaches only later turns',
  async (t) => {
    const { daemon, provider } = await scene(t, { homeRules: null });
    const who = await controller(daemon, 'in-process');
    provider.reply(['first']);
    resultOf(await startTurn(who, { prompt: 'one' }));
    await who.client.event('turn.terminal');
    t.equal(systemOf(provider.requests[0]!.body), INDEX, 'no AGENTS.md yet: the index alone');
    writeFileSync(join(daemon.workspace, 'AGENTS.md'), WORKSPACE_RULES);
    provider.reply(['second']);
    resultOf(await startTurn(who, { prompt: 'two' }));
    await who.client.event('turn.terminal');
    t.equal(systemOf(provider.requests[1]!.body), `${WORKSPACE_RULES}\n\n${INDEX}`);
  },
);

t.test('a workspace AGENTS.md that is a symlink, a hard link or too large is not used', async (t) => {
  const { daemon, provider } = await scene(t, { homeRules: null });
  const outside = mkdtempSync(join(tmpdir(), 'magid-outside-'));
  t.teardown(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(join(outside, 'id_rsa'), 'secret-key-4b1a');
  const who = await controller(daemon, 'in-process');
  const agents = join(daemon.workspace, 'AGENTS.md');
  const variants: Array<[string, () => void]> = [
    ['a symlink to a credential file', () => symlinkSync(join(outside, 'id_rsa'), agents)],
    ['a hard link', () => linkSync(join(outside, 'id_rsa'), agents)],
    ['one byte over 16,384', () => writeFileSync(agents, 'x'.repeat(16_385))],
  ];
  for (const [index, [what, make]] of variants.entries()) {
    rmSync(agents, { force: true });
    make();
    provider.reply(['ok']);
    resultOf(await startTurn(who, { prompt: 'go' }));
    await who.client.event('turn.terminal');
    t.equal(systemOf(provider.requests[index]!.body), INDEX, `${what}: left out`);
    t.notMatch(provider.requests[index]!.text, 'secret-key-4b1a');
  }
  rmSync(agents);
  writeFileSync(agents, 'x'.repeat(16_384));
  provider.reply(['ok']);
  resultOf(await startTurn(who, { prompt: 'go' }));
  await who.client.event('turn.terminal');
  t.equal(
    systemOf(provider.requests[3]!.body),
    `${'x'.repeat(16_384)}\n\n${INDEX}`,
    'exactly 16,384 bytes is used',
  );
});

t.test('load_skill gives the model a skill’s text; an unknown name is an error', async (t) => {
  const { daemon, provider } = await scene(t, { homeRules: null });
  provider.replyToolCalls([
    { id: 'k1', name: 'load_skill', arguments: '{"name":"release-notes"}' },
    { id: 'k2', name: 'load_skill', arguments: '{"name":"broken"}' },
  ]);
  provider.reply(['done']);
  const who = await controller(daemon, 'in-process');
  resultOf(await startTurn(who, { prompt: 'Write the release notes.' }));
  t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
  const offered = (provider.requests[0]!.body.tools as Array<{ function: { name: string } }>).map(
    (tool) => tool.function.name,
  );
  t.ok(offered.includes('load_skill'), 'offered where a skill is installed');
  const tools = provider.requests[1]!.body.messages.filter((message: ChatMessage) => message.role === 'tool');
  t.same(JSON.parse(tools[0].content), {
    name: 'release-notes',
    description: 'Write release notes from the merged changes.',
    content: 'Group the changes by kind.\n',
  });
  t.match(JSON.parse(tools[1].content), { error: { code: 'unknown_skill' } });
  t.notMatch(tools[1].content, 'secret-body');
});
