import t from 'tap';
import { PROVIDER_LIMITS } from '../../../core/limits.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
import { messageStart, messagesText, textBlock } from '../../helpers/messages-streams.js';
import { type ScriptedResponse, stream } from '../../helpers/provider-streams.js';
import { ResponsesStream } from '../../helpers/responses-streams.js';
import { apiFixture } from './api-fixture.js';
import { settle } from './provider-fixture.js';

/** The shared transport's rules, seen through the Responses and Messages adapters. */

const SECRET = 'sk-transport-secret-3e0a';

const APIS = {
  responses: {
    text: (text: string): ScriptedResponse =>
      new ResponsesStream().created().message('m', [text]).completed(),
    started: (): ScriptedResponse => new ResponsesStream().created().cut(),
  },
  messages: {
    text: (text: string): ScriptedResponse => messagesText([text]),
    started: (): ScriptedResponse => stream([messageStart(), ...textBlock(0, ['Hal'])]),
  },
} as const;

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (failed: unknown) => failed,
  );
  if (!(error instanceof ProviderError)) throw new Error('the round did not fail as a provider error');
  return error;
}

for (const [api, streams] of Object.entries(APIS) as Array<
  [keyof typeof APIS, (typeof APIS)[keyof typeof APIS]]
>) {
  t.test(`${api}: a 503 is retried after its backoff; a 401 is not, and its words stay out`, async (t) => {
    const { server, run, retries } = await apiFixture(t, api);
    server.replyStatus(503, { message: SECRET }).script(streams.text('Hello'));
    t.equal((await run()).text, 'Hello');
    t.same(
      retries.map((retry) => [retry.kind, retry.status, retry.delayMs]),
      [['http_status', 503, PROVIDER_LIMITS.backoff_base_ms]],
    );
    server.replyStatus(401, { message: `bad key ${SECRET}` });
    const refused = await failure(run());
    t.same(JSON.parse(JSON.stringify(refused)), { kind: 'http_status', status: 401 });
    t.notMatch(String(refused.stack), SECRET);
  });

  t.test(`${api}: stopping the turn aborts the request at once, mid-stream`, async (t) => {
    const { server, run } = await apiFixture(t, api);
    const hold = server.hold();
    server.script({ ...streams.started(), steps: [...streams.started().steps, hold] });
    const controller = new AbortController();
    const round = run({ signal: controller.signal });
    await hold.reached;
    controller.abort();
    t.equal((await failure(round)).kind, 'cancelled');
    await server.requests[0]!.disconnected;
    t.pass('the server saw the request end');
  });

  t.test(`${api}: silence past the idle bound abandons the request`, async (t) => {
    const { server, run, clock } = await apiFixture(t, api);
    const hold = server.hold();
    server.script({ ...streams.started(), steps: [...streams.started().steps, hold] });
    const round = run();
    await hold.reached;
    await settle();
    clock.advance(PROVIDER_LIMITS.idle_timeout_ms);
    t.equal((await failure(round)).kind, 'idle_timeout');
  });
}
