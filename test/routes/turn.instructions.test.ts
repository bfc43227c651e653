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

/** What `status` says of the AGENTS.md files. */
async function instructionsOf(who: Awaited<ReturnType<typeof controller>>) {
  const { instructions } = await who.client.call('status');
  return instructions as { home: unknown; workspaces: unknown[] };
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

/** A real-sized AGENTS.md of 34.5 KB, as long-lived repositories ship them: its first 32 KiB are used. */
const LONG_RULES = `${'- Run the linter and the tests before every commit; keep each commit to one change.\n'.repeat(410)}- Ask before you delete anything outside of this workspace.\n`;

t.test(
  'a 34.5 KB AGENTS.md, the home’s or the workspace’s: its first 32 KiB reach the system message',
  async (t) => {
    t.equal(Buffer.byteLength(LONG_RULES), 34_500);
    const { daemon, provider, logs } = await scene(t, { homeRules: LONG_RULES });
    writeFileSync(join(daemon.workspace, 'AGENTS.md'), LONG_RULES);
    const who = await controller(daemon, 'in-process');
    for (const prompt of ['one', 'two']) {
      provider.reply(['ok']);
      resultOf(await startTurn(who, { prompt }));
      await who.client.event('turn.terminal');
    }
    const first = LONG_RULES.slice(0, 32_768);
    t.equal(systemOf(provider.requests[0]!.body), `${first}\n\n${first}\n\n${INDEX}`);
    t.match(
      logs.filter((entry) => /AGENTS\.md is over 32768 bytes/.test(String(entry.msg))),
      [{ bytes_used: 32_768 }, { workspace: daemon.workspace, bytes_used: 32_768 }],
      'a warning for each, the workspace’s once while it stays so',
    );
    t.same(await instructionsOf(who), {
      home: { state: 'cut', bytes: 32_768, reason: null, linked: false },
      workspaces: [{ workspace: daemon.workspace, state: 'cut', bytes: 32_768, reason: null, linked: false }],
    });
  },
);

t.test(
  'a workspace AGENTS.md linked to a file of the workspace is followed; one linked outside is refused with a log line',
  async (t) => {
    const { daemon, provider, logs } = await scene(t, { homeRules: null });
    const outside = mkdtempSync(join(tmpdir(), 'magid-outside-'));
    t.teardown(() => rmSync(outside, { recursive: true, force: true }));
    writeFileSync(join(outside, 'id_rsa'), 'secret-key-4b1a');
    writeFileSync(join(daemon.workspace, 'CLAUDE.md'), WORKSPACE_RULES);
    const agents = join(daemon.workspace, 'AGENTS.md');
    const who = await controller(daemon, 'in-process');
    const turn = async () => {
      provider.reply(['ok']);
      resultOf(await startTurn(who, { prompt: 'go' }));
      await who.client.event('turn.terminal');
      return provider.requests.at(-1)!;
    };

    symlinkSync('CLAUDE.md', agents);
    t.equal(
      systemOf((await turn()).body),
      `${WORKSPACE_RULES}\n\n${INDEX}`,
      'AGENTS.md -> CLAUDE.md is followed',
    );
    t.match((await instructionsOf(who)).workspaces, [{ state: 'used', linked: true }]);

    rmSync(agents);
    symlinkSync(join(outside, 'id_rsa'), agents);
    const refused = await turn();
    t.equal(systemOf(refused.body), INDEX, 'a link outside: left out');
    t.notMatch(refused.text, 'secret-key-4b1a');
    t.match(
      logs.filter((entry) => entry.msg === 'a workspace AGENTS.md was not used'),
      [{ workspace: daemon.workspace, reason: 'outside_workspace' }],
    );
    t.match((await instructionsOf(who)).workspaces, [
      { workspace: daemon.workspace, state: 'refused', reason: 'outside_workspace' },
    ]);

    rmSync(agents);
    linkSync(join(outside, 'id_rsa'), agents);
    t.equal(systemOf((await turn()).body), INDEX, 'a hard link: left out');
    t.match((await instructionsOf(who)).workspaces, [{ state: 'refused', reason: 'hard_linked' }]);
    t.notMatch(JSON.stringify(logs), 'secret-key-4b1a');
  },
);

t.test('an AGENTS.md of exactly 32 KiB is used whole, one byte more is cut', async (t) => {
  const { daemon, provider } = await scene(t, { homeRules: null });
  const who = await controller(daemon, 'in-process');
  for (const [index, text] of ['x'.repeat(32_768), `${'x'.repeat(32_768)}y`].entries()) {
    writeFileSync(join(daemon.workspace, 'AGENTS.md'), text);
    provider.reply(['ok']);
    resultOf(await startTurn(who, { prompt: 'go' }));
    await who.client.event('turn.terminal');
    t.equal(systemOf(provider.requests[index]!.body), `${'x'.repeat(32_768)}\n\n${INDEX}`);
  }
  t.match((await instructionsOf(who)).workspaces, [{ state: 'cut', bytes: 32_768 }]);
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
    files: [],
    files_truncated: false,
    size: 27,
    offset: 0,
    length: 27,
    content: 'Group the changes by kind.\n',
    next_offset: null,
  });
  t.match(JSON.parse(tools[1].content), { error: { code: 'unknown_skill' } });
  t.notMatch(tools[1].content, 'secret-body');
});

t.test(
  "a skill's description over 1,024 characters is cut there, with a warning, and the skill is offered",
  async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'magid-instructions-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const home = join(root, 'home');
    const description = `Build apps with the Claude API. ${'Use tools and streaming. '.repeat(50)}`.slice(
      0,
      1_068,
    );
    mkdirSync(join(home, 'skills', 'claude-api'), { recursive: true });
    writeFileSync(
      join(home, 'skills', 'claude-api', 'SKILL.md'),
      `---\nname: claude-api\ndescription: ${JSON.stringify(description)}\n---\nRead the docs first.\n`,
    );
    const provider = await ScriptedProvider.start(t);
    const logs: Array<Record<string, unknown>> = [];
    const daemon = await startDaemon(t, {
      home,
      provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
      logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
    });
    const who = await controller(daemon, 'in-process');
    provider.reply(['ok']);
    resultOf(await startTurn(who, { prompt: 'go' }));
    await who.client.event('turn.terminal');
    const kept = description.slice(0, 1_024).trimEnd();
    t.equal(
      systemOf(provider.requests[0]!.body),
      `Installed skills (load one with load_skill before following it):\n- claude-api: ${kept}`,
    );
    t.match(
      logs.filter((entry) => String(entry.msg).startsWith("an installed skill's description")),
      [
        {
          skill: 'claude-api',
          characters: 1_068,
          msg: "an installed skill's description is over 1024 characters; it was cut there",
        },
      ],
    );
    t.notOk(
      logs.some((entry) => entry.msg === 'an installed skill was skipped'),
      'not skipped',
    );
  },
);
