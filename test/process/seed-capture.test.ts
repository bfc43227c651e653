import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { CAPTURE_REFUSALS } from '../../core/capture/refusals.js';
import { RESOURCE_INPUT_REFUSALS } from '../../core/resources/resource-input.js';
import { schemaRefusalMessage, TOOL_CONTRACT_REFUSALS } from '../../core/resources/tool-contract.js';
import { op } from '../helpers/daemon.js';
import {
  claim,
  codeOf,
  DESCRIPTOR_MEMBERS,
  expectedRevisionSha256,
  fileResource,
  type Listing,
  type Registered,
  registryOf,
  resultOf,
  sha256Hex,
} from '../routes/session.resources.fixture.js';
import { contract, type SeedDaemon, seedDaemon } from './seed-fixture.js';

// One daemon started from the TypeScript sources serves every case of the file.
t.setTimeout(60_000);

const TOOL_PATH = 'app/contracts/lookup_order.json';
const SKILL_PATH = 'app/guides/brevity.md';
const TOOL_SOURCE = contract(
  { order_id: { type: 'string', maxLength: 64 } },
  { status: { type: 'string', maxLength: 32 }, shipped: { type: 'boolean' } },
  30_000,
);
/** A byte order mark, CRLF and multibyte characters: kept byte for byte. */
const SKILL_SOURCE = '\uFEFFRéponds brièvement.\r\nCite the note you read – 🙂\n';
/** Text that must never leave the daemon: it is only in files that are refused or only captured. */
const SECRET = 'secret-body-4f1e';
/** The one message of the lexical path rules, refused before any capture. */
const PATH_RULES = RESOURCE_INPUT_REFUSALS.path;

let daemon: SeedDaemon;
t.before(async () => {
  daemon = await seedDaemon(t);
});

t.test(
  'captured revisions: exact hashes, stable resource ids, fresh revision ids, attribution',
  async (t) => {
    const who = await daemon.controller();
    const registry = registryOf(who);
    daemon.write(TOOL_PATH, TOOL_SOURCE);
    daemon.write(SKILL_PATH, SKILL_SOURCE);

    const registerOperation = op();
    const tool = resultOf<Registered>(
      await registry.register(
        { ...fileResource('tool', 'lookup_order', TOOL_PATH), description: 'Look up an order' },
        null,
        registerOperation,
      ),
    );
    t.strictSame(
      tool.entry,
      {
        resource_id: tool.entry.resource_id,
        revision_id: tool.entry.revision_id,
        kind: 'tool',
        name: 'lookup_order',
        description: 'Look up an order',
        content_sha256: sha256Hex(TOOL_SOURCE),
        revision_sha256: expectedRevisionSha256('tool', 'lookup_order', 'Look up an order', TOOL_SOURCE),
        captured_bytes: Buffer.byteLength(TOOL_SOURCE),
        registered_by: {
          instance_id: daemon.ready.instance_id,
          connection_id: who.connectionId,
          operation_id: registerOperation,
          grant_generation: who.generation,
        },
      },
      'the descriptor of a captured tool, every member known in advance but the ids',
    );
    t.match(tool.entry.resource_id, /^res_[A-Za-z0-9_-]{22}$/);
    t.match(tool.entry.revision_id, /^rev_[A-Za-z0-9_-]{22}$/);

    const skillBytes = Buffer.from(SKILL_SOURCE, 'utf8');
    const skill = resultOf<Registered>(await registry.register(fileResource('skill', 'brevity', SKILL_PATH)));
    t.equal(skill.entry.captured_bytes, skillBytes.length, 'bytes, not characters');
    t.equal(skill.entry.content_sha256, sha256Hex(skillBytes), 'the byte order mark and CRLF are kept');
    t.equal(skill.entry.revision_sha256, expectedRevisionSha256('skill', 'brevity', '', skillBytes));

    const sameBytes = resultOf<Registered>(
      await registry.register(fileResource('skill', 'brevity', SKILL_PATH), skill.entry.revision_id),
    );
    t.equal(sameBytes.entry.resource_id, skill.entry.resource_id, 'a replacement keeps the resource id');
    t.not(
      sameBytes.entry.revision_id,
      skill.entry.revision_id,
      'identical bytes still get a fresh revision id',
    );
    t.equal(sameBytes.entry.content_sha256, skill.entry.content_sha256);
    t.equal(sameBytes.entry.revision_sha256, skill.entry.revision_sha256);

    const described = resultOf<Registered>(
      await registry.register(
        { ...fileResource('skill', 'brevity', SKILL_PATH), description: 'Keep it short' },
        sameBytes.entry.revision_id,
      ),
    );
    t.equal(described.entry.content_sha256, skill.entry.content_sha256, 'metadata only: same content hash');
    t.equal(
      described.entry.revision_sha256,
      expectedRevisionSha256('skill', 'brevity', 'Keep it short', skillBytes),
      'metadata only: a new revision hash',
    );

    // Another connection takes the session over and replaces the skill from changed bytes.
    const { client, connectionId } = await daemon.connect();
    const taken = await claim(client, who.session);
    t.equal(taken.generation, who.generation + 1);
    daemon.write(SKILL_PATH, 'Answer in two lines.\n');
    const replaceOperation = op();
    const replaced = resultOf<Registered>(
      await registryOf({ ...who, client, control: taken.control }).register(
        fileResource('skill', 'brevity', SKILL_PATH),
        described.entry.revision_id,
        replaceOperation,
      ),
    );
    t.equal(replaced.entry.resource_id, skill.entry.resource_id);
    t.equal(replaced.entry.content_sha256, sha256Hex('Answer in two lines.\n'));
    t.strictSame(
      replaced.entry.registered_by,
      {
        instance_id: daemon.ready.instance_id,
        connection_id: connectionId,
        operation_id: replaceOperation,
        grant_generation: taken.generation,
      },
      'attribution names the action that registered this revision',
    );
    t.equal(
      codeOf(await registry.list()),
      'unauthorized',
      'the first connection lost control with the takeover',
    );

    const listing = resultOf<Listing>(
      await client.request(
        'session.resources.list',
        {},
        { session: who.session, control: taken.control, operation: null },
      ),
    );
    t.strictSame(listing.entries, [replaced.entry, tool.entry], 'skills sort before tools');
    for (const entry of listing.entries) t.strictSame(Object.keys(entry).sort(), DESCRIPTOR_MEMBERS);
    t.strictSame(
      tool.entry.registered_by.connection_id,
      who.connectionId,
      'the tool keeps the attribution of its own revision',
    );

    const unregistered = resultOf<{ resource_id: string }>(
      await client.request(
        'session.resources.unregister',
        { resource_id: tool.entry.resource_id, expected_revision: tool.entry.revision_id },
        { session: who.session, control: taken.control, operation: op() },
      ),
    );
    t.equal(unregistered.resource_id, tool.entry.resource_id);
    const recreated = resultOf<Registered>(
      await client.request(
        'session.resources.register',
        { expected_revision: null, resource: fileResource('tool', 'lookup_order', TOOL_PATH) },
        { session: who.session, control: taken.control, operation: op() },
      ),
    );
    t.not(recreated.entry.resource_id, tool.entry.resource_id, 'recreation allocates a new resource id');
    t.equal(recreated.entry.content_sha256, tool.entry.content_sha256);

    const lookup = await client.call(
      'operation.lookup',
      { operation_id: replaceOperation },
      { session: who.session, control: taken.control },
    );
    t.strictSame(
      lookup,
      {
        operation_id: replaceOperation,
        method: 'session.resources.register',
        status: 'completed',
        result: { entry: replaced.entry, registry_revision: replaced.registry_revision },
        error: null,
      },
      'the lookup reports the descriptor, never the source',
    );
  },
);

t.test('refused sources: links, unsafe paths, oversize and invalid bytes, malformed contracts', async (t) => {
  const who = await daemon.controller();
  const registry = registryOf(who);
  const ws = daemon.workspace;
  const outside = join(dirname(ws), 'outside.md');
  writeFileSync(outside, `${SECRET} outside the workspace\n`);
  daemon.write('refused/real.md', `${SECRET} real\n`);
  symlinkSync(join(ws, 'refused', 'real.md'), join(ws, 'refused', 'link.md'));
  symlinkSync(outside, join(ws, 'refused', 'escape.md'));
  symlinkSync(join(ws, 'refused'), join(ws, 'linked_dir'));
  daemon.write('refused/twice.md', `${SECRET} twice\n`);
  linkSync(join(ws, 'refused', 'twice.md'), join(ws, 'refused', 'twice_again.md'));
  linkSync(outside, join(ws, 'refused', 'outside_link.md'));
  execFileSync('mkfifo', [join(ws, 'refused', 'pipe.md')]);
  mkdirSync(join(ws, 'refused', 'directory.md'));
  daemon.write('refused/latin1.md', Buffer.from(`${SECRET} caf\xe9`, 'latin1'));
  daemon.write('refused/overlong.md', Buffer.concat([Buffer.from(SECRET), Buffer.from([0xc0, 0xaf])]));
  daemon.write('refused/nul.md', `${SECRET}\u0000`);
  daemon.write('refused/big_skill.md', `${SECRET}${'x'.repeat(16 * 1024)}`);
  daemon.write('refused/big_tool.json', `{"input_schema":"${SECRET}${'x'.repeat(32 * 1024)}"}`);
  daemon.write('refused/.env', `TOKEN=${SECRET}`);

  const skill = (path: string) => fileResource('skill', 'guide', path);
  const tool = (path: string) => fileResource('tool', 'lookup', path);
  const cases: Array<[string, ReturnType<typeof fileResource>, string]> = [
    ['a symlinked file', skill('refused/link.md'), CAPTURE_REFUSALS.symlink],
    ['a symlink out of the workspace', skill('refused/escape.md'), CAPTURE_REFUSALS.symlink],
    ['a symlinked directory on the way', skill('linked_dir/real.md'), CAPTURE_REFUSALS.symlink],
    ['a file with two hard links', skill('refused/twice.md'), CAPTURE_REFUSALS.hard_linked],
    ['a hard link to a file outside', skill('refused/outside_link.md'), CAPTURE_REFUSALS.hard_linked],
    ['a FIFO', skill('refused/pipe.md'), CAPTURE_REFUSALS.not_regular_file],
    ['a directory', skill('refused/directory.md'), CAPTURE_REFUSALS.not_regular_file],
    ['an absolute path', skill(outside), PATH_RULES],
    ['a dot-dot component', skill('refused/../../outside.md'), PATH_RULES],
    ['a dot component', skill('./refused/real.md'), PATH_RULES],
    ['an empty component', skill('refused//real.md'), PATH_RULES],
    ['a trailing slash', skill('refused/'), PATH_RULES],
    ['a backslash', skill('refused\\real.md'), CAPTURE_REFUSALS.path_forbidden_character],
    ['a NUL in the path', skill('refused/real.md\u0000.txt'), PATH_RULES],
    ['a path over 1,024 bytes', skill('é'.repeat(513)), PATH_RULES],
    [
      'a component over 255 bytes',
      skill(`refused/${'a'.repeat(256)}`),
      CAPTURE_REFUSALS.path_component_too_long,
    ],
    ['a credential-like path', skill('refused/.env'), CAPTURE_REFUSALS.credential_path],
    ['a missing file', skill('refused/missing.md'), CAPTURE_REFUSALS.not_found],
    ['Latin-1 bytes', skill('refused/latin1.md'), CAPTURE_REFUSALS.not_utf8],
    ['an overlong UTF-8 sequence', skill('refused/overlong.md'), CAPTURE_REFUSALS.not_utf8],
    ['a NUL byte', skill('refused/nul.md'), CAPTURE_REFUSALS.contains_nul],
    ['a skill over 16 KiB', skill('refused/big_skill.md'), CAPTURE_REFUSALS.too_large],
    ['a tool over 32 KiB', tool('refused/big_tool.json'), CAPTURE_REFUSALS.too_large],
  ];
  const contracts: Array<[string, string, string]> = [
    ['not JSON', `{"input_schema":{"type":"object","${SECRET}`, TOOL_CONTRACT_REFUSALS.syntax],
    ['a trailing comma', `${TOOL_SOURCE.slice(0, -1)},}`, TOOL_CONTRACT_REFUSALS.syntax],
    ['a byte order mark', `\uFEFF${TOOL_SOURCE}`, TOOL_CONTRACT_REFUSALS.syntax],
    [
      'a repeated member',
      `{"timeout_ms":1000,${TOOL_SOURCE.slice(1)}`,
      TOOL_CONTRACT_REFUSALS.duplicate_member,
    ],
    [
      'an unknown member',
      JSON.stringify({ ...JSON.parse(TOOL_SOURCE), [SECRET]: 1 }),
      TOOL_CONTRACT_REFUSALS.unknown_member,
    ],
    ['a missing schema', JSON.stringify({ input_schema: {} }), TOOL_CONTRACT_REFUSALS.missing_schema],
    [
      'a null timeout',
      JSON.stringify({ ...JSON.parse(TOOL_SOURCE), timeout_ms: null }),
      TOOL_CONTRACT_REFUSALS.timeout,
    ],
    [
      'a nested property',
      contract({ order: { type: 'object' } }, {}),
      schemaRefusalMessage('input_schema', 'property_schema'),
    ],
  ];
  for (const [index, [what, source, message]] of contracts.entries()) {
    const path = `refused/contract_${index}.json`;
    daemon.write(path, source);
    cases.push([`a contract with ${what}`, tool(path), message]);
  }

  const before = resultOf<Listing>(await registry.list());
  for (const [what, resource, message] of cases) {
    const response = await registry.register(resource);
    t.strictSame(
      [codeOf(response), response.error?.message],
      ['invalid_payload', message],
      `${what}: invalid_payload with its fixed message`,
    );
  }
  t.strictSame(resultOf<Listing>(await registry.list()), before, 'nothing was registered');

  daemon.write('refused/fine.md', 'A fine guide.\n');
  t.equal(
    codeOf(await registry.register(skill('refused/fine.md'))),
    'ok',
    'after every refusal the capture slot is free',
  );
});

t.test('no path or source body reaches a client or the log', async (t) => {
  const everything = daemon.clients.map((client) => client.received.join('\n')).join('\n');
  t.ok(everything.includes('lookup_order'), 'the frames checked are the ones of the tests above');
  const hidden = [TOOL_PATH, SKILL_PATH, 'refused/', SECRET, 'Réponds', 'Answer in two lines', 'order_id'];
  for (const text of hidden) {
    t.notOk(everything.includes(text), `no frame carries ${JSON.stringify(text)}`);
    t.notOk(daemon.magid.stderr.includes(text), `no log line carries ${JSON.stringify(text)}`);
  }
});
