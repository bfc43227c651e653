import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { claimedSession, op } from '../helpers/daemon.js';
import {
  type Controller,
  claim,
  codeOf,
  fileResource,
  type Listing,
  type Registered,
  registryOf,
  resultOf,
  sha256Hex,
  skillResource,
  TOOL_CONTRACT,
} from '../routes/session.resources.fixture.js';
import { mountSlowFilesystem, slowFilesystemUnavailable } from './slow-filesystem.js';
import { logLines, shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

// Four daemons, one of them given a bounded wait of its own to exit: more than the default file timeout.
t.setTimeout(120_000);

const unavailable = slowFilesystemUnavailable();
const SKILL_TEXT = 'Answer from the notes first.\nSay which note you used.\n';
const FILES = [
  { name: 'lookup.json', content: TOOL_CONTRACT },
  { name: 'guide.md', content: SKILL_TEXT },
  { name: 'stuck.md', content: 'Never captured.\n', never: true },
];
/** How long a registration's answer may take in all, its held read included. */
const HELD_ANSWER_TIMEOUT_MS = 30_000;
/** How long the capture slot may stay charged after its read returned. */
const SLOT_TIMEOUT_MS = 10_000;
/** The bound on the daemon's exit after SIGTERM while a read never returns. */
const EXIT_TIMEOUT_MS = 20_000;

/** A daemon, the slow filesystem, and a plain workspace beside them; all gone at the test's end. */
async function daemonWithSlowFilesystem(t: Test) {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const { magid } = await startDaemon(t, { socket, home: join(root, 'home') });
  // Mounted after the daemon started, so it is unmounted first: stopping the server fails any read the
  // daemon still waits on, and the daemon can then be killed whatever state it is in.
  const slow = await mountSlowFilesystem(t, FILES);
  const plain = join(root, 'ws');
  mkdirSync(plain);
  return { socket, magid, slow, plain };
}

/** A new profile connection controlling a new session over `workspace`. */
async function controllerOver(socket: string, workspace: string): Promise<Controller> {
  const { client } = await connectSocket(socket);
  const init = await client.initialize();
  const claimed = await claimedSession(client, workspace);
  return {
    client,
    ...claimed,
    connectionId: init.connection_id as string,
    instanceId: init.instance_id as string,
  };
}

/** The session of `of`, claimed by a new connection. */
async function takeOver(socket: string, of: Controller): Promise<Controller> {
  const { client } = await connectSocket(socket);
  const init = await client.initialize();
  return {
    client,
    session: of.session,
    ...(await claim(client, of.session)),
    connectionId: init.connection_id as string,
    instanceId: init.instance_id as string,
  };
}

/** A registration whose answer is awaited later; `answered` tells whether it already came. */
function sendRegistration(who: Controller, resource: unknown) {
  const id = who.client.send(
    'session.resources.register',
    { expected_revision: null, resource } as Record<string, unknown>,
    { session: who.session, control: who.control, operation: op() },
  );
  const sent = { answered: false, answer: who.client.response(id, HELD_ANSWER_TIMEOUT_MS) };
  sent.answer.then(
    () => {
      sent.answered = true;
    },
    () => {},
  );
  return sent;
}

/** A request's answer; a daemon that stopped serving while the read is held fails here, by name. */
async function whileHeld<T>(what: string, request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (error) {
    throw new Error(`${what} was not answered while the read was held: ${(error as Error).message}`);
  }
}

/**
 * Waits until the capture slot is free, asking with a registration that can only be refused: the name of a
 * built-in tool is checked right after the slot, so it is `configuration_busy` while the slot is charged
 * and `conflict` once it is free. Resolves with that last code.
 */
async function freeSlot(who: Controller): Promise<string> {
  const deadline = Date.now() + SLOT_TIMEOUT_MS;
  for (;;) {
    const code = codeOf(await registryOf(who).register(skillResource('read_file')));
    if (code !== 'configuration_busy') return code;
    if (Date.now() > deadline) throw new Error('the capture slot stayed charged after its read returned');
    await sleep(20);
  }
}

t.test(
  'a capture waiting on a slow filesystem leaves every other request answered',
  { skip: unavailable ?? false },
  async (t) => {
    const { socket, slow, plain } = await daemonWithSlowFilesystem(t);
    const reader = await controllerOver(socket, slow.root);
    const other = await controllerOver(socket, plain);

    const held = sendRegistration(reader, fileResource('tool', 'lookup', 'lookup.json'));
    t.equal(await slow.waitForRead(), 'lookup.json', 'the capture reads the slow file');

    const { client: late } = await connectSocket(socket);
    const init = await whileHeld('initialize', late.initialize());
    t.equal(init.instance_id, reader.instanceId, 'a new connection is initialized');
    const status = await whileHeld('status', late.call('status'));
    t.equal(status.sessions, 2, 'status is answered');
    const listing = await whileHeld('session.resources.list', registryOf(other).list());
    t.same(resultOf<Listing>(listing).entries, [], 'another session lists its registry');
    const busy = await whileHeld(
      'session.resources.register',
      registryOf(other).register(skillResource('notes')),
    );
    t.equal(codeOf(busy), 'configuration_busy', 'another registration is refused at once');
    t.notOk(held.answered, 'all of them before the read was released');

    t.equal(await slow.release(), 1, 'the read is released');
    const registered = resultOf<Registered>(await held.answer);
    t.equal(registered.entry.name, 'lookup');
    t.equal(registered.entry.captured_bytes, Buffer.byteLength(TOOL_CONTRACT), 'every byte was captured');
    t.equal(registered.entry.content_sha256, sha256Hex(TOOL_CONTRACT), 'the exact bytes');
    t.same(
      resultOf<Listing>(await registryOf(reader).list()).entries.map((entry) => entry.resource_id),
      [registered.entry.resource_id],
      'and it is published',
    );
  },
);

for (const loss of ['disconnect', 'takeover'] as const) {
  t.test(
    `control lost by ${loss} while the read is held: nothing is published, the slot is charged until the read returns`,
    { skip: unavailable ?? false },
    async (t) => {
      const { socket, slow } = await daemonWithSlowFilesystem(t);
      const reader = await controllerOver(socket, slow.root);
      const held = sendRegistration(reader, fileResource('skill', 'guide', 'guide.md'));
      t.equal(await slow.waitForRead(), 'guide.md', 'the capture reads the slow file');

      if (loss === 'disconnect') reader.client.close();
      const successor = await whileHeld('session.claim', takeOver(socket, reader));
      if (loss === 'takeover') {
        const revoked = await whileHeld('the revocation', reader.client.event('session.control_revoked'));
        t.equal((revoked.payload as { reason: string }).reason, 'takeover', 'the reader lost control');
      }
      const early = await whileHeld(
        'session.resources.register',
        registryOf(successor).register(skillResource('notes')),
      );
      t.equal(codeOf(early), 'configuration_busy', 'the slot stays charged while the read is held');

      t.equal(await slow.release(), 1, 'the read is released');
      t.equal(await freeSlot(successor), 'conflict', 'the slot frees once the read returned');
      if (loss === 'takeover') {
        t.equal(
          codeOf(await held.answer),
          'stale_connection',
          'the reader is told its capture was discarded',
        );
      }
      t.same(
        resultOf<Listing>(await registryOf(successor).list()).entries,
        [],
        'the capture of the lost control was not published',
      );

      const again = sendRegistration(successor, fileResource('skill', 'guide', 'guide.md'));
      t.equal(await slow.waitForRead(), 'guide.md');
      t.equal(await slow.release(), 1);
      const registered = resultOf<Registered>(await again.answer);
      t.equal(
        registered.entry.content_sha256,
        sha256Hex(SKILL_TEXT),
        'a registration after the release succeeds',
      );
      t.equal(registered.entry.captured_bytes, Buffer.byteLength(SKILL_TEXT));
      t.equal(registered.entry.registered_by.connection_id, successor.connectionId);
    },
  );
}

t.test(
  'SIGTERM while a read never returns: a warning that the home stays locked until it does, then exit 0',
  { skip: unavailable ?? false },
  async (t) => {
    const { magid, socket, slow } = await daemonWithSlowFilesystem(t);
    const reader = await controllerOver(socket, slow.root);
    sendRegistration(reader, fileResource('skill', 'stuck', 'stuck.md'));
    t.equal(await slow.waitForRead(), 'stuck.md', 'the capture reads a file that never answers');

    magid.child.kill('SIGTERM');
    const exit = await magid.waitExit(EXIT_TIMEOUT_MS).catch((error: Error) => {
      throw new Error(
        `${error.message} after SIGTERM with a read that never returns; stderr:\n${magid.stderr}`,
      );
    });
    t.strictSame(exit, { code: 0, signal: null }, 'exits 0');
    const warnings = logLines(magid.stderr).filter(
      (line) =>
        line.level === 40 &&
        typeof line.msg === 'string' &&
        line.msg.includes('capture') &&
        line.msg.includes('filesystem'),
    );
    t.ok(warnings.length > 0, 'stderr warns that a capture was left waiting on its filesystem');
    const last = logLines(magid.stderr).at(-1);
    t.match(
      last,
      { level: 40, msg: /home lock is let go, only once the filesystem answers it/ },
      'the last line says the home stays locked until the read returns',
    );
    t.notOk(
      logLines(magid.stderr).some((line) => line.msg === 'stopped'),
      'and never that the daemon stopped',
    );
  },
);
