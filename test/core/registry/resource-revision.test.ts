import t from 'tap';
import { ResourceRevision } from '../../../core/registry/resource-revision.js';
import { parseResourceInput } from '../../../core/resources/resource-input.js';
import { contentSha256, revisionSha256 } from '../../../core/resources/revision-hash.js';

const registeredBy = {
  instance_id: 'ins_a',
  connection_id: 'con_b',
  operation_id: 'op_c',
  grant_generation: 4,
};

function capture(kind: 'tool' | 'skill', content: string, description = '') {
  const input = parseResourceInput({ kind, name: 'thing', description, source: { kind: 'inline', content } });
  return ResourceRevision.capture({
    resourceId: 'res_fixed',
    input,
    captured: Buffer.from(content, 'utf8'),
    registeredBy,
  });
}

t.test('a skill is charged its bytes twice (exact and as text) plus its descriptor', async (t) => {
  const revision = capture('skill', 'Käse\n');
  const descriptorBytes = Buffer.byteLength(JSON.stringify(revision.descriptor));
  t.equal(revision.chargedBytes, 6 * 2 + descriptorBytes);
  t.equal(revision.instructionBytes, 6);
  t.equal(revision.instructions, 'Käse\n');
  t.equal(revision.contract, null);
});

t.test('a tool is charged its exact bytes, its normalized contract and its descriptor', async (t) => {
  const source =
    '{ "output_schema": {"type":"object","additionalProperties":false},\n' +
    '  "input_schema": {"additionalProperties":false, "type":"object"} }';
  const revision = capture('tool', source, 'desc');
  const normalized = JSON.stringify(revision.contract);
  t.equal(
    normalized,
    '{"input_schema":{"type":"object","properties":{},"required":[],"additionalProperties":false},' +
      '"output_schema":{"type":"object","properties":{},"required":[],"additionalProperties":false},' +
      '"timeout_ms":120000}',
  );
  const descriptorBytes = Buffer.byteLength(JSON.stringify(revision.descriptor));
  t.equal(revision.chargedBytes, Buffer.byteLength(source) + normalized.length + descriptorBytes);
  t.equal(revision.instructionBytes, 0, 'tools add nothing to combined instructions');
});

t.test('the descriptor carries the hashes, the attribution and a fresh revision id', async (t) => {
  const a = capture('skill', 'same', 'd');
  const b = capture('skill', 'same', 'd');
  const captured = Buffer.from('same');
  t.equal(a.descriptor.content_sha256, contentSha256(captured));
  t.equal(
    a.descriptor.revision_sha256,
    revisionSha256({ kind: 'skill', name: 'thing', description: 'd', captured }),
  );
  t.equal(a.resourceId, 'res_fixed');
  t.not(a.revisionId, b.revisionId);
  t.same(a.descriptor.registered_by, registeredBy);
  t.ok(Object.isFrozen(a) && Object.isFrozen(a.descriptor));
});

t.test('content rules refuse with invalid_payload', async (t) => {
  t.throws(() => capture('tool', '{}'), { code: 'invalid_payload' });
  t.throws(() => capture('skill', ''), { code: 'invalid_payload' });
});
