import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import { schema } from '../../bin/schema.js';
import { ERROR_CODES } from '../../core/errors.js';
import { declaredMethods, protocolDocumentText } from '../../plugins/protocol-document.js';
import { claimedSession, op, startDaemon } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { PROTOCOL_DOCUMENT, schemaViolation, WireSchemaCheck } from '../helpers/wire-schema.js';

const COMMITTED = new URL('../../docs/protocol.schema.json', import.meta.url);

t.test('docs/protocol.schema.json is what the routes declare now (else: npm run schema)', async (t) => {
  t.equal(readFileSync(COMMITTED, 'utf8'), await protocolDocumentText());
});

t.test('magid schema prints that document', async (t) => {
  const out = new PassThrough();
  let printed = '';
  out.on('data', (bytes: Buffer) => {
    printed += bytes.toString();
  });
  t.equal(await schema(out), 0);
  t.equal(printed, readFileSync(COMMITTED, 'utf8'));
});

t.test('the document is a valid JSON Schema 2020-12 that compiles whole', async (t) => {
  const ajv = new Ajv2020({ strict: true });
  ajv.addKeyword('x-profile');
  t.ok(ajv.validateSchema(PROTOCOL_DOCUMENT), JSON.stringify(ajv.errors));
  t.doesNotThrow(() => ajv.compile(PROTOCOL_DOCUMENT));
});

t.test(
  'every method and event the daemon serves is in the document, with its envelope and profile',
  async (t) => {
    const daemon = await startDaemon(t);
    const defs = PROTOCOL_DOCUMENT.$defs as Record<
      string,
      { properties: Record<string, unknown>; 'x-profile'?: string }
    >;
    const methods = [...daemon.app.framing.methods.keys()].sort();
    t.same(
      methods,
      Object.keys(defs)
        .filter((name) => name.endsWith('.request'))
        .map((name) => name.slice(0, -'.request'.length))
        .sort(),
    );
    const rule = (value: unknown) =>
      JSON.stringify(value) === '{"type":"null"}'
        ? 'null'
        : JSON.stringify(value) === '{"$ref":"#/$defs/wire_id"}'
          ? 'required'
          : 'optional';
    for (const [name, wire] of daemon.app.framing.methods) {
      const request = defs[`${name}.request`]!;
      t.same(
        {
          session: rule(request.properties.session_id),
          control: rule(request.properties.control_token),
          operation: rule(request.properties.operation_id),
          profile: request['x-profile'] === 'application_resources_v1',
        },
        {
          session: wire.session,
          control: wire.control,
          operation: wire.operation,
          profile: wire.profile === true,
        },
        name,
      );
      t.ok(defs[`${name}.payload`] && defs[`${name}.result`], `${name} has a payload and a result`);
    }
    const events = Object.keys(defs)
      .filter((name) => name.endsWith('.event'))
      .map((name) => [
        name.slice(0, -'.event'.length),
        defs[name]!['x-profile'] === 'application_resources_v1',
      ]);
    t.same(
      events.sort(),
      [...daemon.app.framing.events].map(([name, { profile }]) => [name, profile]).sort(),
    );
  },
);

t.test('the document lists every error code, and the declared methods are sorted by name', async (t) => {
  t.same((PROTOCOL_DOCUMENT.$defs.error_code as { enum: string[] }).enum, ERROR_CODES);
  const names = (await declaredMethods()).map((method) => method.name);
  t.same(names, [...names].sort());
});

t.test(
  'a frame outside the document is reported; refusals of what a test sent on purpose are not',
  async (t) => {
    const check = new WireSchemaCheck();
    const request = (id: string, method: string, payload: object) =>
      `${JSON.stringify({ type: 'request', id, method, session_id: 's1', control_token: 'c1', operation_id: 'o1', payload })}\n`;
    check.sent(request('r1', 'turn.stop', { turn_id: 'turn_1' }));
    check.received(
      JSON.stringify({
        type: 'response',
        id: 'r1',
        instance_id: 'i',
        ok: true,
        result: { turn_id: 'turn_1', status: 'cancelling' },
      }),
    );
    t.same(check.violations, [], 'a result of the declared shape passes');

    check.sent(request('r2', 'turn.stop', { turn_id: 'turn_1' }));
    check.received(
      JSON.stringify({
        type: 'response',
        id: 'r2',
        instance_id: 'i',
        ok: true,
        result: { turn_id: 'turn_1', status: 'stopped' },
      }),
    );
    t.match(check.violations, [/turn\.stop result: turn\.stop\.result/]);

    check.sent(request('r3', 'turn.stop', { unexpected: true }));
    check.received(
      JSON.stringify({
        type: 'response',
        id: 'r3',
        instance_id: 'i',
        ok: false,
        error: { code: 'invalid_payload', message: 'm' },
      }),
    );
    t.equal(check.violations.length, 1, 'a refusal of a malformed request is the daemon doing its job');

    check.sent(request('r4', 'turn.stop', { unexpected: true }));
    check.received(
      JSON.stringify({
        type: 'response',
        id: 'r4',
        instance_id: 'i',
        ok: true,
        result: { turn_id: 't', status: 'cancelling' },
      }),
    );
    t.match(
      check.violations[1],
      /turn\.stop request accepted/,
      'an accepted request outside its payload schema',
    );

    check.received(
      JSON.stringify({
        type: 'response',
        id: 'r9',
        instance_id: 'i',
        ok: false,
        error: { code: 'no_such_code', message: 'm' },
      }),
    );
    t.match(check.violations[2], /^response/, 'an error code the document does not list');

    const event = {
      type: 'event',
      event: 'turn.activity',
      session_id: 's1',
      operation_id: 'o1',
      grant_generation: 1,
      sequence: 3,
      payload: { turn_id: 't', activity: { kind: 'tool_call', call: 'abc', status: 'pending' } },
    };
    check.received(JSON.stringify(event));
    t.match(check.violations[3], /^event turn\.activity/, 'a call hash that is not 16 hex digits');
    check.received(JSON.stringify({ ...event, event: 'turn.unheard_of' }));
    t.match(check.violations[4], /no schema turn\.unheard_of\.event/);
  },
);

t.test('a real turn with a built-in call: every frame fits the document', async (t) => {
  const provider = await ScriptedProvider.start(t);
  provider.replyToolCalls([
    { id: 'c1', name: 'update_plan', arguments: '{"steps":[{"step":"look","status":"in_progress"}]}' },
  ]);
  provider.reply(['Done.']);
  const daemon = await startDaemon(t, { provider: { baseUrl: provider.baseUrl, model: 'm', apiKey: null } });
  const client = await daemon.connect('in-process');
  const { session, control } = await claimedSession(client, daemon.workspace);
  await client.call('turn.start', { prompt: 'plan it' }, { session, control, operation: op() });
  await client.event('turn.terminal');
  const frames = client.received.map((line) => JSON.parse(line) as Record<string, unknown>);
  const events = frames.filter((frame) => frame.type === 'event');
  t.ok(events.some((frame) => (frame.payload as { activity?: { kind: string } }).activity?.kind === 'plan'));
  for (const frame of events)
    t.equal(schemaViolation(`${frame.event}.event`, frame), null, String(frame.event));
});
