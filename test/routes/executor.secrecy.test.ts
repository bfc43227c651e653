import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import pino from 'pino';
import t from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { sha256 } from '../../core/hashing.js';
import { newId } from '../../core/ids.js';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  confirmedExecutor,
  createdExecutor,
  disconnect,
  forgedSecret,
  type HeldExecutor,
  identity,
  proof,
} from './executor.fixture.js';

/** Every form in which a secret, or the verifier kept of it, could be written out. */
function forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'base64url');
  const verifier = sha256(secret);
  return [
    secret,
    bytes.toString('base64'),
    bytes.toString('hex'),
    verifier.toString('hex'),
    verifier.toString('base64'),
    verifier.toString('base64url'),
  ];
}

for (const transport of TRANSPORTS) {
  t.test(`executor secrets leave only in direct create and rotate responses (${transport})`, async (t) => {
    const logLines: string[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });
    const daemon = await startDaemon(t, { logger });
    daemon.app.log.trace({ marker: 'trace-is-captured' }, 'the log capture works');
    if (transport === 'socket') await daemon.socketPath();

    const clients: WireClient[] = [];
    const connect = async (capabilities?: string[]) => {
      const client = await daemon.connect(transport, capabilities);
      clients.push(client);
      return client;
    };
    const issuing: Array<{ client: WireClient; id: string; secret: string }> = [];
    const operations: string[] = [];
    const mutate = async (client: WireClient, method: string, payload: Record<string, unknown>) => {
      const operation = op();
      operations.push(operation);
      const id = client.send(method, payload, { operation });
      return { id, response: await client.response(id) };
    };
    const issue = async (client: WireClient, method: string, payload: Record<string, unknown>) => {
      const { id, response } = await mutate(client, method, payload);
      t.equal(response.ok, true, `${method} succeeds`);
      const result = response.result as { executor_id: string; resume_secret: string };
      issuing.push({ client, id, secret: result.resume_secret });
      return result;
    };
    const refused = async (client: WireClient, method: string, payload: Record<string, unknown>) => {
      const { response } = await mutate(client, method, payload);
      t.equal(response.ok, false, `${method} is refused`);
    };

    const observer = await connect();
    const ordinaryObserver = await connect([]);
    const { session } = await claimedSession(observer, daemon.workspace);
    const first = await connect();
    const second = await connect();
    const third = await connect();
    const intruder = await connect();
    const wrongSecrets = [forgedSecret(), Buffer.alloc(32, 0xab).toString('base64url')];

    const { executor_id: executorId, resume_secret: created } = await issue(first, 'executor.create', {});
    const executor = { executor_id: executorId };
    await refused(intruder, 'executor.confirm', proof(executor, created));
    await refused(first, 'executor.confirm', proof(executor, wrongSecrets[0]));
    await mutate(first, 'executor.confirm', proof(executor, created));
    await refused(first, 'executor.rotate_confirm', { ...identity(executor, 1), resume_secret: created });
    const rotated = (await issue(first, 'executor.rotate', identity(executor, 1))).resume_secret;
    await refused(first, 'executor.rotate_confirm', {
      ...identity(executor, 1),
      resume_secret: wrongSecrets[1],
    });
    await mutate(first, 'executor.rotate_confirm', { ...identity(executor, 1), resume_secret: rotated });
    await refused(intruder, 'executor.resume', proof(executor, created));
    await mutate(second, 'executor.resume', proof(executor, rotated));
    const abandoned = (await issue(second, 'executor.rotate', identity(executor, 2))).resume_secret;
    await disconnect(daemon, second, executorId);
    await mutate(third, 'executor.resume', proof(executor, rotated));
    await refused(intruder, 'executor.resume', proof(executor, abandoned));
    await refused(first, 'executor.release', identity(executor, 1));
    await mutate(third, 'executor.release', identity(executor, 3));
    await refused(intruder, 'executor.resume', proof(executor, rotated));

    const secrets = [created, rotated, abandoned];
    const forbidden = [...secrets, ...wrongSecrets].flatMap(forms);
    const leaks = (what: string, texts: string[]) => {
      const found = forbidden.filter((form) => texts.some((text) => text.includes(form)));
      t.same(found, [], `${what}: no secret or verifier`);
    };

    t.equal(issuing.length, 3);
    for (const { client, id, secret } of issuing) {
      const frame = client.received.find((text) => text.includes(`"id":"${id}"`));
      t.match(frame, secret, 'the direct response carries the secret');
    }
    const issuingIds = new Set(issuing.map(({ id }) => `"id":"${id}"`));
    const otherFrames = clients.flatMap((client) =>
      client.received.filter((text) => ![...issuingIds].some((id) => text.includes(id))),
    );
    t.ok(
      otherFrames.some((text) => text.includes('"ok":false')),
      'refusals were received',
    );
    leaks('every other frame, refusals included', otherFrames);
    t.same(observer.pendingEvents, [], 'no event reached the observer');
    t.equal(ordinaryObserver.received.length, 1, 'the ordinary observer saw only its initialize');

    const reader = await connect([]);
    const lookups: string[] = [];
    for (const operation of operations) {
      lookups.push(JSON.stringify(await reader.call('operation.lookup', { operation_id: operation })));
    }
    t.equal(lookups.filter((text) => text.includes('"method":"executor.')).length, operations.length);
    leaks('operation.lookup', lookups);

    const debugViews = [
      JSON.stringify(daemon.app.executors),
      inspect(daemon.app.executors, { depth: Number.POSITIVE_INFINITY }),
      JSON.stringify(daemon.app.operations),
      inspect(daemon.app.operations, { depth: Number.POSITIVE_INFINITY }),
    ];
    leaks('debug views of the registry and the operation ledger', debugViews);

    const history = daemon.app.history;
    const sessions = history.listSessions(0, 100).items;
    t.ok(sessions.some((row) => row.session_id === session));
    const records = sessions.flatMap((row) => history.records(row.session_id, 0, 100, 1 << 20).items);
    t.ok(records.length > 0, 'the store holds records to check');
    leaks('history sessions and records', [JSON.stringify(sessions), JSON.stringify(records)]);

    for (const client of clients) client.close();
    await daemon.app.close();
    const stateDir = join(daemon.home, 'state');
    const stored = readdirSync(stateDir).map((name) => readFileSync(join(stateDir, name)).toString('latin1'));
    t.ok(stored.length > 0, 'the state directory holds the store');
    leaks('the bytes of the state directory', stored);

    t.ok(
      logLines.some((line) => line.includes('trace-is-captured')),
      'trace lines reach the capture',
    );
    leaks('every log line', logLines);
  });
}

/** Every executor method but create, as a connection without proof would send it. */
function unprovenRequests(executorId: string, generation: number): Array<[string, Record<string, unknown>]> {
  const named = { executor_id: executorId };
  const guess = forgedSecret();
  return [
    ['executor.confirm', proof(named, guess)],
    ['executor.resume', proof(named, guess)],
    ['executor.rotate', identity(named, generation)],
    ['executor.rotate_confirm', { ...identity(named, generation), resume_secret: guess }],
    ['executor.release', identity(named, generation)],
  ];
}

for (const transport of TRANSPORTS) {
  t.test(
    `without proof, an existing executor looks exactly like an unknown one (${transport})`,
    async (t) => {
      const daemon = await startDaemon(t);
      const holder = await daemon.connect(transport);
      const issuer = await daemon.connect(transport);
      const leaver = await daemon.connect(transport);
      const fencedConnection = await daemon.connect(transport);
      const resumer = await daemon.connect(transport);
      const stranger = await daemon.connect(transport);
      const reader = await daemon.connect(transport, []);

      const rotating = await confirmedExecutor(holder);
      await holder.call('executor.rotate', identity(rotating, 1), { operation: op() });
      const provisional = await createdExecutor(issuer);
      const detached = await confirmedExecutor(leaver);
      await disconnect(daemon, leaver, detached.executor_id);
      const fenced = await confirmedExecutor(fencedConnection);
      await resumer.call('executor.resume', proof(fenced), { operation: op() });
      const probes: Array<{ executor: HeldExecutor; generation: number; callers: WireClient[] }> = [
        { executor: rotating, generation: 1, callers: [stranger] },
        { executor: provisional, generation: 1, callers: [stranger] },
        { executor: detached, generation: 1, callers: [stranger] },
        { executor: fenced, generation: 2, callers: [stranger, fencedConnection] },
      ];
      const before = daemon.app.executors.view();

      /** The response and the retained operation, with the two ids that differ per request set aside. */
      const answer = async (caller: WireClient, method: string, payload: Record<string, unknown>) => {
        const operation = op();
        const { id: _id, ...response } = await caller.request(method, payload, { operation });
        const { operation_id: _operation, ...retained } = await reader.call('operation.lookup', {
          operation_id: operation,
        });
        return { response, retained };
      };

      let compared = 0;
      for (const { executor, generation, callers } of probes) {
        const existing = unprovenRequests(executor.executor_id, generation);
        const unknown = unprovenRequests(newId('exe'), generation);
        for (const caller of callers) {
          for (const [index, [method, payload]] of existing.entries()) {
            const [, unknownPayload] = unknown[index]!;
            const seen = await answer(caller, method, payload);
            t.match(seen.response, { ok: false, error: { code: 'unauthorized' } }, method);
            t.same(
              seen,
              await answer(caller, method, unknownPayload),
              `${method}: the same answer and record`,
            );
            compared += 1;
          }
        }
      }
      t.equal(compared, 25);
      t.same(daemon.app.executors.view(), before, 'no refusal changed anything');
    },
  );
}
