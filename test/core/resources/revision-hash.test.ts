import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import type { ResourceKind } from '../../../core/resources/names.js';
import {
  contentSha256,
  REVISION_HASH_DOMAIN,
  revisionPreimage,
  revisionSha256,
} from '../../../core/resources/revision-hash.js';

interface Vector {
  id: string;
  kind: ResourceKind;
  name: string;
  description: string;
  description_utf8_hex: string;
  captured: string;
  captured_bytes: number;
  content_sha256: string;
  revision_sha256: string;
  preimage_hex?: string;
}

const doc = readFileSync(new URL('../../../docs/revision-hash-vectors.md', import.meta.url), 'utf8');
const block =
  /<!-- revision-hash-vectors:begin -->\n```json\n([\s\S]*?)\n```\n<!-- revision-hash-vectors:end -->/.exec(
    doc,
  );
const vectors: Vector[] = block ? JSON.parse(block[1] as string) : [];
const prose = block ? doc.slice(0, block.index) : doc;

/** The preimage written out field by field with DataView, without the code under test. */
function independentPreimage(fields: Uint8Array[]): Uint8Array {
  const domain = new TextEncoder().encode('magi-application-resource-v1');
  const total = domain.length + fields.reduce((sum, field) => sum + 8 + field.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  out.set(domain, 0);
  let at = domain.length;
  for (const field of fields) {
    view.setUint32(at, Math.floor(field.length / 2 ** 32));
    view.setUint32(at + 4, field.length >>> 0);
    out.set(field, at + 8);
    at += 8 + field.length;
  }
  return out;
}

function tableCells(line: string): string[] {
  return line.startsWith('|')
    ? line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim())
    : [];
}

/** The hex bytes of the annotated preimage listing, read from the start of each of its lines. */
function annotatedPreimageHex(): string {
  const listing = /## The preimage of[^\n]*\n\n```text\n([\s\S]*?)\n```/.exec(prose)?.[1] ?? '';
  return listing
    .split('\n')
    .map((line) => /^[0-9a-f]+(?: [0-9a-f]+)?/.exec(line)?.[0] ?? '')
    .join('')
    .replaceAll(' ', '');
}

function hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

t.test('the document publishes at least a tool, a skill and a multi-byte description', async (t) => {
  t.ok(block, 'the machine-readable block is present');
  t.ok(vectors.some((v) => v.kind === 'tool'));
  t.ok(vectors.some((v) => v.kind === 'skill'));
  t.ok(vectors.some((v) => Buffer.byteLength(v.description) > v.description.length));
  t.ok(vectors.some((v) => v.preimage_hex !== undefined));
});

for (const vector of vectors) {
  t.test(`vector ${vector.id}`, async (t) => {
    const captured = Buffer.from(vector.captured, 'utf8');
    const input = { kind: vector.kind, name: vector.name, description: vector.description, captured };
    t.equal(Buffer.from(vector.description, 'utf8').toString('hex'), vector.description_utf8_hex);
    t.equal(captured.length, vector.captured_bytes);

    const encode = (text: string) => new TextEncoder().encode(text);
    const preimage = independentPreimage([
      encode(vector.kind),
      encode(vector.name),
      encode(vector.description),
      captured,
    ]);
    t.equal(hex(preimage), vector.revision_sha256, 'independent preimage agrees with the published digest');
    t.equal(hex(captured), vector.content_sha256, 'independent content digest agrees');

    t.equal(revisionSha256(input), vector.revision_sha256);
    t.equal(contentSha256(captured), vector.content_sha256);
    t.equal(revisionPreimage(input).toString('hex'), Buffer.from(preimage).toString('hex'));
    if (vector.preimage_hex !== undefined) {
      t.equal(revisionPreimage(input).toString('hex'), vector.preimage_hex);
      t.equal(hex(Buffer.from(vector.preimage_hex, 'hex')), vector.revision_sha256);
      t.equal(annotatedPreimageHex(), vector.preimage_hex, 'the annotated listing shows the same bytes');
    }

    const rows = prose.split('\n').filter((line) => tableCells(line)[0] === `\`${vector.id}\``);
    t.ok(
      rows.some((row) => row.includes(vector.content_sha256) && row.includes(vector.revision_sha256)),
      'the table shows the same digests',
    );
  });
}

t.test('a metadata-only change keeps the content hash and changes the revision hash', async (t) => {
  const captured = Buffer.from('same bytes');
  const before = { kind: 'skill' as const, name: 'tone', description: 'one', captured };
  const after = { ...before, description: 'two' };
  t.equal(contentSha256(before.captured), contentSha256(after.captured));
  t.not(revisionSha256(before), revisionSha256(after));
  t.not(revisionSha256(before), revisionSha256({ ...before, kind: 'tool' }));
  t.not(revisionSha256(before), revisionSha256({ ...before, name: 'tones' }));
});

t.test('length prefixes keep field boundaries apart', async (t) => {
  const captured = Buffer.from('');
  t.not(
    revisionSha256({ kind: 'skill', name: 'ab', description: 'c', captured }),
    revisionSha256({ kind: 'skill', name: 'a', description: 'bc', captured }),
  );
});

t.test('the preimage starts with the raw 28-byte domain', async (t) => {
  t.equal(Buffer.byteLength(REVISION_HASH_DOMAIN), 28);
  const preimage = revisionPreimage({ kind: 'tool', name: 'x', description: '', captured: new Uint8Array() });
  t.equal(preimage.subarray(0, 28).toString('utf8'), REVISION_HASH_DOMAIN);
  t.equal(preimage.length, 28 + 8 + 4 + 8 + 1 + 8 + 8);
  t.equal(preimage.subarray(28, 36).toString('hex'), '0000000000000004');
});

t.test('captured bytes are hashed exactly, from any view of a buffer', async (t) => {
  const backing = Buffer.from('xxAnswer in one sentence.\nyy');
  const view = new Uint8Array(backing.buffer, backing.byteOffset + 2, 24);
  const input = { kind: 'skill' as const, name: 'tone', description: 'Be brief', captured: view };
  t.equal(revisionSha256(input), '81fe0a28a942be0cb3b8ef9a594a2c2289613681f831a2dc985dfd1eea7415a3');
  t.equal(contentSha256(view), '56b4f2fa90997a380a5e6bf1d2dc37b2975f181f5342bdab05763a4f5e6985ee');
});

t.test('text that has no UTF-8 encoding is never hashed', async (t) => {
  const captured = Buffer.from('x');
  t.throws(
    () => revisionSha256({ kind: 'skill', name: 'a', description: 'lone \ud800', captured }),
    TypeError,
  );
  t.throws(() => revisionSha256({ kind: 'skill', name: '\udc00', description: '', captured }), TypeError);
});
