import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { expectedRevisionSha256, sha256Hex } from '../routes/session.resources.fixture.js';
import { PROJECT_ROOT, shortTempDir, startDaemon } from './spawn-daemon.js';

/** Marks a value the example shortens. */
const SHORTENED = '…';

interface Frame {
  direction: '>' | '<';
  value: Record<string, unknown>;
}

/** The frames of the protocol document's first exchange, in order; `{…}` (read as `"…"`) stands for any value. */
function firstExchange(): Frame[] {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'protocol.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## A first exchange'));
  const start = section.indexOf('```text\n') + '```text\n'.length;
  const block = section.slice(start, section.indexOf('\n```', start));
  return block.split('\n').map((line) => ({
    direction: line[0] as '>' | '<',
    value: JSON.parse(line.slice(2).replaceAll(`{${SHORTENED}}`, `"${SHORTENED}"`)),
  }));
}

/**
 * What a shortened value promises of the daemon's: a hash starts with the hex digits shown; a random id,
 * token or secret only with its kind (`ses_`, `inst_`, ...).
 */
function shownPrefix(shown: string): string {
  return /^[0-9a-f]+$/.test(shown) ? shown : shown.slice(0, shown.lastIndexOf('_') + 1);
}

/**
 * Compares a frame of the example with the daemon's. A shortened string binds to the daemon's value the
 * first time it is seen and must name that same value everywhere after; every other value is exact.
 */
function differences(shown: unknown, actual: unknown, bound: Map<string, unknown>, at = '$'): string[] {
  if (shown === SHORTENED) return [];
  if (typeof shown === 'string' && bound.has(shown)) {
    return bound.get(shown) === actual ? [] : [`${at}: not the value ${shown} stood for before`];
  }
  if (typeof shown === 'string' && shown.endsWith(SHORTENED)) {
    bound.set(shown, actual);
    const prefix = shownPrefix(shown.slice(0, -SHORTENED.length));
    return typeof actual === 'string' && actual.startsWith(prefix) ? [] : [`${at}: does not start ${prefix}`];
  }
  if (typeof shown === 'object' && shown !== null && typeof actual === 'object' && actual !== null) {
    const keys = [...new Set([...Object.keys(shown), ...Object.keys(actual)])];
    return keys.flatMap((key) =>
      differences(
        (shown as Record<string, unknown>)[key],
        (actual as Record<string, unknown>)[key],
        bound,
        `${at}.${key}`,
      ),
    );
  }
  return shown === actual
    ? []
    : [`${at}: ${JSON.stringify(actual)} where the example shows ${JSON.stringify(shown)}`];
}

/** The example's request with every shortened value replaced by the one the daemon gave. */
function substituted(value: unknown, bound: Map<string, unknown>): unknown {
  if (typeof value === 'string') return bound.has(value) ? bound.get(value) : value;
  if (Array.isArray(value)) return value.map((item) => substituted(item, bound));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituted(item, bound)]));
  }
  return value;
}

t.test('the first exchange of docs/protocol.md is what the daemon answers', async (t) => {
  const root = shortTempDir(t);
  const workspace = join(root, 'notes');
  mkdirSync(workspace);
  const { ready } = await startDaemon(t, { socket: join(root, 'd.sock'), home: join(root, 'home') });
  const { client } = await connectSocket(ready.socket);
  t.teardown(() => client.close());

  const frames = firstExchange();
  t.equal(frames.length, 12, 'six requests, six responses');
  const bound = new Map<string, unknown>([['/home/me/notes', workspace]]);
  for (let index = 0; index < frames.length; index += 2) {
    const request = substituted(frames[index]!.value, bound) as Record<string, unknown>;
    const shown = frames[index + 1]!;
    t.equal(frames[index]!.direction, '>');
    t.equal(shown.direction, '<');
    client.sendRaw(`${JSON.stringify(request)}\n`);
    const response = await client.response(request.id as string, 20_000);
    t.strictSame(differences(shown.value, response, bound), [], `${request.method} answers as shown`);
  }

  const register = frames[6]!.value as {
    payload: { resource: Record<string, string> & { source: { content: string } } };
  };
  const { content } = register.payload.resource.source;
  const entry = (frames[7]!.value.result as { entry: Record<string, unknown> }).entry;
  t.equal(entry.captured_bytes, Buffer.byteLength(content), 'the example counts the content bytes');
  t.ok(
    sha256Hex(content).startsWith((entry.content_sha256 as string).slice(0, -1)),
    'the example shows the content hash of its content',
  );
  t.ok(
    expectedRevisionSha256('tool', 'lookup', 'Find a note', content).startsWith(
      (entry.revision_sha256 as string).slice(0, -1),
    ),
    'and its revision hash',
  );
});
