import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { CAPTURE_REFUSALS } from '../../core/capture/refusals.js';
import { startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  codeOf,
  controller,
  everythingReceived,
  expectedRevisionSha256,
  fileResource,
  listed,
  registered,
  registryOf,
  sha256Hex,
  TOOL_CONTRACT,
  toolResource,
} from './session.resources.fixture.js';

const SKILL_TEXT = '\uFEFFKeep every answer under ten lines.\r\nCite the file you read.\n';

for (const transport of TRANSPORTS) {
  t.test(`workspace_file capture (${transport})`, async (t) => {
    t.test('captures the exact bytes once; the path never appears in any response or list', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      mkdirSync(join(daemon.workspace, 'app', 'resources'), { recursive: true });
      const toolPath = 'app/resources/lookup_contract.json';
      const skillPath = 'app/resources/brevity_guide.md';
      writeFileSync(join(daemon.workspace, toolPath), TOOL_CONTRACT);
      writeFileSync(join(daemon.workspace, skillPath), SKILL_TEXT);

      const tool = await registered(who, fileResource('tool', 'lookup', toolPath));
      const skill = await registered(who, fileResource('skill', 'brevity', skillPath));
      t.equal(tool.entry.content_sha256, sha256Hex(TOOL_CONTRACT));
      t.equal(tool.entry.revision_sha256, expectedRevisionSha256('tool', 'lookup', '', TOOL_CONTRACT));
      t.equal(
        skill.entry.content_sha256,
        sha256Hex(Buffer.from(SKILL_TEXT, 'utf8')),
        'the byte order mark is kept',
      );
      t.equal(skill.entry.captured_bytes, Buffer.byteLength(SKILL_TEXT, 'utf8'));

      writeFileSync(join(daemon.workspace, skillPath), 'Changed later.');
      const listing = await listed(who);
      t.equal(
        listing.entries.find((entry) => entry.name === 'brevity')?.content_sha256,
        skill.entry.content_sha256,
        'a later change of the file does not reach the registered revision',
      );
      const recaptured = await registered(
        who,
        fileResource('skill', 'brevity', skillPath),
        skill.entry.revision_id,
      );
      t.equal(
        recaptured.entry.content_sha256,
        sha256Hex('Changed later.'),
        'registering again captures again',
      );

      const received = everythingReceived(who.client);
      for (const secret of [
        toolPath,
        skillPath,
        'lookup_contract',
        'brevity_guide',
        'Cite the file',
        'input_schema',
      ]) {
        t.notOk(received.includes(secret), `nothing received contains ${secret}`);
      }
    });

    t.test('refused sources are invalid_payload with fixed text, and never registered', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const ws = daemon.workspace;
      writeFileSync(join(ws, 'real.md'), 'Real instructions.');
      symlinkSync(join(ws, 'real.md'), join(ws, 'linked.md'));
      mkdirSync(join(ws, 'real_dir'));
      writeFileSync(join(ws, 'real_dir', 'inner.md'), 'Inner instructions.');
      symlinkSync(join(ws, 'real_dir'), join(ws, 'linked_dir'));
      writeFileSync(join(ws, '.env'), 'TOKEN=not-for-models');
      mkdirSync(join(ws, 'config', '.ssh'), { recursive: true });
      writeFileSync(join(ws, 'config', '.ssh', 'notes.md'), 'Not for models.');
      writeFileSync(join(ws, '.python_history'), 'connect("not-for-models")');
      mkdirSync(join(ws, '.terraform.d'));
      writeFileSync(join(ws, '.terraform.d', 'credentials.tfrc.json'), '{"token":"not-for-models"}');
      writeFileSync(join(ws, 'twice.md'), 'Linked twice.');
      linkSync(join(ws, 'twice.md'), join(ws, 'twice_again.md'));
      execFileSync('mkfifo', [join(ws, 'pipe.md')]);
      writeFileSync(join(ws, 'latin1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      writeFileSync(join(ws, 'nul.md'), 'a\u0000b');
      writeFileSync(join(ws, 'big.md'), 'x'.repeat(16 * 1024 + 1));

      const cases: Array<[string, keyof typeof CAPTURE_REFUSALS]> = [
        ['linked.md', 'symlink'],
        ['linked_dir/inner.md', 'symlink'],
        ['.env', 'credential_path'],
        ['config/.ssh/notes.md', 'credential_path'],
        ['.python_history', 'credential_path'],
        ['.terraform.d/credentials.tfrc.json', 'credential_path'],
        ['twice.md', 'hard_linked'],
        ['pipe.md', 'not_regular_file'],
        ['latin1.md', 'not_utf8'],
        ['nul.md', 'contains_nul'],
        ['big.md', 'too_large'],
        ['missing.md', 'not_found'],
        ['real.md/inner.md', 'not_directory'],
      ];
      const registry = registryOf(who);
      for (const [path, refusal] of cases) {
        const response = await registry.register(fileResource('skill', 'guide', path));
        t.equal(codeOf(response), 'invalid_payload', path);
        t.equal(response.error?.message, CAPTURE_REFUSALS[refusal], `${path}: ${refusal}`);
      }
      t.same((await listed(who)).entries, [], 'nothing was registered');
      const received = everythingReceived(who.client);
      for (const [path] of cases) t.notOk(received.includes(path), `${path} appears nowhere`);
      t.notOk(received.includes('not-for-models'));
      t.equal(
        codeOf(await registry.register(fileResource('skill', 'guide', 'real.md'))),
        'ok',
        'the slot is free',
      );
    });

    t.test('the daemon home is never captured', async (t) => {
      const daemon = await startDaemon(t);
      writeFileSync(join(daemon.home, 'notes.md'), 'The daemon’s own file.');
      writeFileSync(join(daemon.workspace, 'ok.md'), 'A workspace file.');
      const root = dirname(daemon.home);
      const above = await controller(daemon, transport, root);
      mkdirSync(join(daemon.home, 'drafts'));
      writeFileSync(join(daemon.home, 'drafts', 'ok.md'), 'A well-formed skill below the home.');
      // session.create refuses the home and what lies in it, so these sessions are made over folders that
      // are then swapped for links there: the capture checks the workspace again by descriptor.
      const swapped = async (target: string) => {
        const link = mkdtempSync(join(root, 'swapped-'));
        const who = await controller(daemon, transport, link);
        rmSync(link, { recursive: true });
        symlinkSync(target, link);
        return who;
      };
      const inside = await swapped(daemon.home);
      // Found only by the walk up from the workspace root, which runs after the file was read.
      const below = await swapped(join(daemon.home, 'drafts'));
      const refusals = [
        await registryOf(above).register(fileResource('skill', 'guide', 'home/notes.md')),
        await registryOf(above).register(fileResource('skill', 'guide', 'home/state/history.sqlite3')),
        await registryOf(inside).register(fileResource('skill', 'guide', 'notes.md')),
        await registryOf(below).register(fileResource('skill', 'guide', 'ok.md')),
      ];
      for (const response of refusals) {
        t.equal(codeOf(response), 'invalid_payload');
        t.equal(response.error?.message, CAPTURE_REFUSALS.excluded_directory);
      }
      const beside = await registryOf(above).register(fileResource('skill', 'guide', 'ws/ok.md'));
      t.equal(codeOf(beside), 'ok', 'the rest of a workspace above the home stays capturable');
    });

    t.test('the file is read only after authorization, the expected revision and capacity', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const stranger = await controller(daemon, transport);
      symlinkSync('/etc/hostname', join(daemon.workspace, 'contract.json'));
      const fromLink = fileResource('tool', 'lookup', 'contract.json');

      t.equal(
        codeOf(await registryOf({ ...stranger, session: who.session }).register(fromLink)),
        'unauthorized',
      );
      const existing = await registered(who, toolResource('lookup'));
      t.equal(codeOf(await registryOf(who).register(fromLink)), 'conflict', 'name taken, file not judged');
      t.equal(
        codeOf(await registryOf(who).register(fromLink, 'rev_stale')),
        'conflict',
        'stale revision, file not judged',
      );
      for (let index = 1; index < 16; index++) await registered(who, toolResource(`tool_${index}`));
      t.equal(
        codeOf(await registryOf(who).register(fileResource('tool', 'seventeenth', 'contract.json'))),
        'limit_exceeded',
        'full, file not judged',
      );
      t.equal(
        codeOf(await registryOf(who).register(fromLink, existing.entry.revision_id)),
        'invalid_payload',
        'admitted, then the file is refused',
      );
    });
  });
}
