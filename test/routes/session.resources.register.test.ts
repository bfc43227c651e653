import t from 'tap';
import { catalogOf } from '../../config/catalog.js';
import { parseConfig } from '../../config/config-file.js';
import { isWireId } from '../../core/ids.js';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  codeOf,
  controller,
  expectedRevisionSha256,
  listed,
  registered,
  registryOf,
  resultOf,
  sha256Hex,
  skillResource,
  TOOL_CONTRACT,
  toolResource,
} from './session.resources.fixture.js';

const CONFIG_FILE = JSON.stringify({
  tools: { disabled: ['Legacy_Lookup'] },
  skills: { disabled: ['old_style'] },
});

for (const transport of TRANSPORTS) {
  t.test(`session.resources.register (${transport})`, async (t) => {
    t.test('creation needs a null expected revision and returns {entry, registry_revision}', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const before = await listed(who);
      const operation = op();
      const description = 'Looks a path up — in the project';
      const response = await registryOf(who).register(
        toolResource('lookup', { description }),
        null,
        operation,
      );
      const result = resultOf<{ entry: Record<string, unknown>; registry_revision: string }>(response);
      t.same(Object.keys(result).sort(), ['entry', 'registry_revision']);
      t.not(result.registry_revision, before.registry_revision);
      t.match(result.entry, {
        kind: 'tool',
        name: 'lookup',
        description,
        captured_bytes: Buffer.byteLength(TOOL_CONTRACT),
        registered_by: {
          instance_id: who.instanceId,
          connection_id: who.connectionId,
          operation_id: operation,
          grant_generation: who.generation,
        },
      });
      t.equal(response.instance_id, who.instanceId);
      t.ok(isWireId(result.entry.resource_id) && isWireId(result.entry.revision_id));
      t.not(result.entry.resource_id, result.entry.revision_id);
      t.same((await listed(who)).entries, [result.entry], 'the list shows the same descriptor');
    });

    t.test('hashes follow the spec, computed independently', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const text = 'Prefer “plain” words.\nNo jargon — ever. 🙂';
      const skill = await registered(who, skillResource('plain_words', { content: text, description: 'é' }));
      t.equal(skill.entry.content_sha256, sha256Hex(Buffer.from(text, 'utf8')));
      t.equal(skill.entry.revision_sha256, expectedRevisionSha256('skill', 'plain_words', 'é', text));
      t.equal(skill.entry.captured_bytes, Buffer.byteLength(text, 'utf8'));
      t.match(skill.entry.content_sha256, /^[0-9a-f]{64}$/);
      t.match(skill.entry.revision_sha256, /^[0-9a-f]{64}$/);

      const tool = await registered(who, toolResource('lookup', { description: '' }));
      t.equal(tool.entry.content_sha256, sha256Hex(TOOL_CONTRACT));
      t.equal(tool.entry.revision_sha256, expectedRevisionSha256('tool', 'lookup', '', TOOL_CONTRACT));

      const relabelled = await registered(
        who,
        toolResource('lookup', { description: 'now described' }),
        tool.entry.revision_id,
      );
      t.equal(relabelled.entry.content_sha256, tool.entry.content_sha256, 'metadata keeps the content hash');
      t.not(relabelled.entry.revision_sha256, tool.entry.revision_sha256, 'and changes the revision hash');
      t.equal(
        relabelled.entry.revision_sha256,
        expectedRevisionSha256('tool', 'lookup', 'now described', TOOL_CONTRACT),
      );
    });

    t.test(
      'replacement keeps the resource id and mints a fresh revision id, even for identical bytes',
      async (t) => {
        const daemon = await startDaemon(t);
        const who = await controller(daemon, transport);
        const first = await registered(who, toolResource('lookup'));
        const second = await registered(who, toolResource('lookup'), first.entry.revision_id);
        t.equal(second.entry.resource_id, first.entry.resource_id);
        t.not(second.entry.revision_id, first.entry.revision_id);
        t.equal(second.entry.revision_sha256, first.entry.revision_sha256, 'same bytes, same hash');
        t.not(second.registry_revision, first.registry_revision);
        t.not(
          second.entry.registered_by.operation_id,
          first.entry.registered_by.operation_id,
          'attribution is per revision',
        );
        t.same(
          (await listed(who)).entries.map((entry) => entry.revision_id),
          [second.entry.revision_id],
          'the replacement is the only revision listed',
        );
      },
    );

    t.test('unrelated changes do not invalidate an expected revision', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const lookup = await registered(who, toolResource('lookup'));
      const style = await registered(who, skillResource('style'));
      await registered(who, skillResource('style'), style.entry.revision_id);
      await registered(who, toolResource('other'));
      const replaced = await registered(who, toolResource('lookup'), lookup.entry.revision_id);
      t.equal(replaced.entry.resource_id, lookup.entry.resource_id);
    });

    t.test('stale revisions, existing names and kind collisions are conflicts', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const registry = registryOf(who);
      const first = await registered(who, toolResource('lookup'));
      const second = await registered(who, toolResource('lookup'), first.entry.revision_id);
      const style = await registered(who, skillResource('style'));
      const revision = (await listed(who)).registry_revision;

      const refusals = {
        'an older revision': await registry.register(toolResource('lookup'), first.entry.revision_id),
        'another resource’s revision': await registry.register(
          toolResource('lookup'),
          style.entry.revision_id,
        ),
        'creating an existing name': await registry.register(toolResource('lookup')),
        'a revision for an absent name': await registry.register(
          toolResource('absent'),
          second.entry.revision_id,
        ),
        'the other kind, created': await registry.register(skillResource('lookup')),
        'the other kind, replaced': await registry.register(
          skillResource('lookup'),
          second.entry.revision_id,
        ),
      };
      for (const [what, response] of Object.entries(refusals)) t.equal(codeOf(response), 'conflict', what);
      t.equal((await listed(who)).registry_revision, revision, 'no refusal changed the registry');
    });

    t.test('content and source rules refuse with invalid_payload', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const registry = registryOf(who);
      const contract = JSON.parse(TOOL_CONTRACT) as Record<string, unknown>;
      const inline = (content: string) => ({ kind: 'inline', content });
      const resource = (overrides: Record<string, unknown>) => ({ ...toolResource('lookup'), ...overrides });
      const cases: Record<string, unknown> = {
        'a tool contract that is not JSON': resource({ source: inline('{"input_schema":') }),
        'a duplicate key': resource({ source: inline(`{"timeout_ms":1000,${TOOL_CONTRACT.slice(1)}`) }),
        'an unknown contract member': resource({ source: inline(JSON.stringify({ ...contract, extra: 1 })) }),
        'a timeout out of range': resource({
          source: inline(JSON.stringify({ ...contract, timeout_ms: 999 })),
        }),
        'an empty skill': skillResource('style', { content: '' }),
        'a skill with NUL': skillResource('style', { content: 'a\u0000b' }),
        'a skill over its source maximum': skillResource('style', { content: 'x'.repeat(16 * 1024 + 1) }),
        'an unknown source kind': resource({ source: { kind: 'url', path: 'x' } }),
        'an extra source member': resource({ source: { kind: 'inline', content: TOOL_CONTRACT, path: 'x' } }),
        'an absolute path': resource({ source: { kind: 'workspace_file', path: '/etc/hosts' } }),
        'a dot-dot component': resource({ source: { kind: 'workspace_file', path: 'a/../b' } }),
        'an empty component': resource({ source: { kind: 'workspace_file', path: 'a//b' } }),
        'the legacy contract shape': { kind: 'tool', name: 'lookup', description: '', contract: contract },
        'an extra resource member': resource({ executor: 'x' }),
        'an upper-case name': resource({ name: 'Lookup' }),
        'a name over 48 bytes': resource({ name: `a${'b'.repeat(48)}` }),
        'a description over 512 bytes': resource({ description: 'é'.repeat(257) }),
        'an unknown kind': resource({ kind: 'prompt' }),
      };
      for (const [what, payload] of Object.entries(cases)) {
        t.equal(codeOf(await registry.register(payload)), 'invalid_payload', what);
      }
      const missing = await who.client.request(
        'session.resources.register',
        { resource: toolResource('lookup') },
        { session: who.session, control: who.control, operation: op() },
      );
      t.equal(codeOf(missing), 'invalid_payload', 'expected_revision is required');
      t.equal(codeOf(await registry.register(toolResource('lookup'), 'not an id')), 'invalid_payload');
      t.same((await listed(who)).entries, [], 'nothing was registered');
    });

    t.test(
      'reserved names are conflicts: built-in, mcp_, discovered and disabled in the config file',
      async (t) => {
        const catalog = catalogOf(parseConfig(CONFIG_FILE), ['house_rules']);
        const daemon = await startDaemon(t, { catalog });
        const who = await controller(daemon, transport);
        const registry = registryOf(who);
        const names = [
          'read_file',
          'run_command',
          'mcp_x',
          'mcp_',
          'house_rules',
          'legacy_lookup',
          'old_style',
        ];
        for (const name of names) {
          t.equal(codeOf(await registry.register(toolResource(name))), 'conflict', `tool ${name}`);
          t.equal(codeOf(await registry.register(skillResource(name))), 'conflict', `skill ${name}`);
        }
        t.equal(
          codeOf(await registry.register(toolResource('mcpx'))),
          'ok',
          'only the mcp_ prefix is reserved',
        );
      },
    );

    t.test('the 17th tool and the 17th skill exceed their bounds', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const registry = registryOf(who);
      for (let index = 0; index < 16; index++) await registered(who, toolResource(`tool_${index}`));
      const seventeenth = await registry.register(toolResource('tool_16'));
      t.equal(codeOf(seventeenth), 'limit_exceeded');
      t.equal(seventeenth.error?.message, 'the session registry holds the maximum number of tools');

      for (let index = 0; index < 16; index++) {
        await registered(who, skillResource(`skill_${index}`, { content: 'Be brief.' }));
      }
      t.equal(
        codeOf(await registry.register(skillResource('skill_16', { content: 'Be brief.' }))),
        'limit_exceeded',
      );
      const listing = await listed(who);
      t.equal(listing.entries.length, 32);
      const tool = listing.entries.find((entry) => entry.name === 'tool_3')!;
      t.equal(
        codeOf(await registry.register(toolResource('tool_3'), tool.revision_id)),
        'ok',
        'a full registry still replaces',
      );
    });

    t.test('operation ids: fresh per mutation, and the outcome is retained for lookup', async (t) => {
      const daemon = await startDaemon(t);
      const who = await controller(daemon, transport);
      const registry = registryOf(who);
      const operation = op();
      const created = resultOf(await registry.register(toolResource('lookup'), null, operation));
      t.equal(
        codeOf(await registry.register(toolResource('other'), null, operation)),
        'operation_already_known',
      );
      const lookup = await who.client.call(
        'operation.lookup',
        { operation_id: operation },
        { session: who.session, control: who.control },
      );
      t.same(lookup, {
        operation_id: operation,
        method: 'session.resources.register',
        status: 'completed',
        result: created,
        error: null,
      });
      const refused = op();
      await registry.register(toolResource('lookup'), null, refused);
      const failed = await who.client.call(
        'operation.lookup',
        { operation_id: refused },
        { session: who.session, control: who.control },
      );
      t.match(failed, { status: 'failed', result: null, error: { code: 'conflict' } });
      const withoutOperation = await who.client.request(
        'session.resources.register',
        { expected_revision: null, resource: toolResource('third') },
        { session: who.session, control: who.control },
      );
      t.equal(codeOf(withoutOperation), 'invalid_request');
    });
  });
}
