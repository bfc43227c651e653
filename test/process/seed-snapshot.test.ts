import t from 'tap';
import type { EventFrame } from '../../client/wire-client.js';
import { op } from '../helpers/daemon.js';
import { stream, toolCallStream } from '../helpers/provider-streams.js';
import {
  codeOf,
  everythingReceived,
  expectedRevisionSha256,
  fileResource,
  type Listing,
  type Registered,
  registryOf,
  resultOf,
  sha256Hex,
} from '../routes/session.resources.fixture.js';
import { applicationTools, confirmedExecutor, resultPayload } from '../routes/turn.fixture.js';
import { contract, revisionTuple, seedDaemon, WAIT_MS, within } from './seed-fixture.js';

// One daemon started from the TypeScript sources, then three turns against the scripted provider.
t.setTimeout(60_000);

const ORDER_PATH = 'app/tools/order_status.json';
const CANCEL_PATH = 'app/tools/cancel_order.json';
const TONE_PATH = 'app/skills/tone.md';

const ORDER_BEFORE = contract(
  { order_id: { type: 'string', maxLength: 64 } },
  { status: { type: 'string', maxLength: 32 } },
);
const CANCEL_BEFORE = contract(
  { order_id: { type: 'string', maxLength: 64 }, reason: { type: 'string', maxLength: 200 } },
  { cancelled: { type: 'boolean' } },
  30_000,
);
const TONE_BEFORE = 'Answer in one short sentence.\n';

const ORDER_AFTER = contract(
  { order_id: { type: 'string', maxLength: 128 }, carrier: { type: 'boolean' } },
  { status: { type: 'string', maxLength: 32 } },
);
const CANCEL_AFTER = contract(
  { order_id: { type: 'string', maxLength: 128 } },
  { cancelled: { type: 'boolean' } },
  60_000,
);
const TONE_AFTER = 'Answer in French.\n';

/** The provider's view of a tool: its name, description and input schema. */
function toolDefinition(name: string, description: string, source: string) {
  return {
    type: 'function',
    function: { name, description, parameters: JSON.parse(source).input_schema },
  };
}

t.test('a held turn keeps its captured snapshot while the files and the registry change', async (t) => {
  const daemon = await seedDaemon(t);
  const { provider } = daemon;
  const who = await daemon.controller();
  const registry = registryOf(who);
  const executor = await confirmedExecutor(who.client);

  daemon.write(ORDER_PATH, ORDER_BEFORE);
  daemon.write(CANCEL_PATH, CANCEL_BEFORE);
  daemon.write(TONE_PATH, TONE_BEFORE);
  const capture = async (kind: 'tool' | 'skill', name: string, path: string, description: string) =>
    resultOf<Registered>(await registry.register({ ...fileResource(kind, name, path), description })).entry;
  const order = await capture('tool', 'order_status', ORDER_PATH, 'Status of an order');
  const cancel = await capture('tool', 'cancel_order', CANCEL_PATH, 'Cancel an order');
  const tone = await capture('skill', 'tone', TONE_PATH, 'House style');
  for (const [entry, source] of [
    [order, ORDER_BEFORE],
    [cancel, CANCEL_BEFORE],
    [tone, TONE_BEFORE],
  ] as const) {
    t.equal(entry.content_sha256, sha256Hex(source), `${entry.name}: content hash of the file's bytes`);
    t.equal(
      entry.revision_sha256,
      expectedRevisionSha256(entry.kind, entry.name, entry.description, source),
      `${entry.name}: revision hash of kind, name, description and bytes`,
    );
  }
  const accepted = resultOf<Listing>(await registry.list());

  const hold = provider.hold();
  provider.script(
    stream([
      hold,
      ...toolCallStream([
        { id: 'call-order', name: 'order_status', arguments: '{"order_id":"A-7"}' },
        { id: 'call-cancel', name: 'cancel_order', arguments: '{"order_id":"B-9","reason":"late"}' },
      ]).steps,
    ]),
  );
  provider.reply(['Order A-7 shipped; ', 'B-9 is cancelled.']);
  const application = {
    expected_registry_revision: accepted.registry_revision,
    executor_id: executor.executor_id,
    executor_generation: executor.executor_generation,
    tool_authorizations: [revisionTuple(order), revisionTuple(cancel)],
  };
  const started = await who.client.response(
    who.client.send(
      'turn.start',
      { prompt: 'What about my orders?', application },
      { session: who.session, control: who.control, operation: op() },
    ),
    WAIT_MS,
  );
  const acceptance = resultOf<{ turn_id: string; application_manifest: Record<string, unknown> }>(started);
  const manifest = acceptance.application_manifest;
  t.strictSame(
    manifest.tools,
    [
      { name: 'cancel_order', ...revisionTuple(cancel), timeout_ms: 30_000 },
      { name: 'order_status', ...revisionTuple(order), timeout_ms: 120_000 },
    ],
    'the manifest names the captured revisions',
  );

  const first = await within(provider.nextRequest(), 'the first provider request');
  const originalTools = [
    toolDefinition('cancel_order', 'Cancel an order', CANCEL_BEFORE),
    toolDefinition('order_status', 'Status of an order', ORDER_BEFORE),
  ];
  t.strictSame(first.body.messages, [
    { role: 'system', content: TONE_BEFORE },
    { role: 'user', content: 'What about my orders?' },
  ]);
  t.strictSame(applicationTools(first.body), originalTools, 'the model sees the captured contracts');
  await within(hold.reached, 'the held provider response');

  // While the first response is held: new bytes in every file, the three resources removed by identity
  // and revision, and replacements captured from the changed files.
  daemon.write(ORDER_PATH, ORDER_AFTER);
  daemon.write(CANCEL_PATH, CANCEL_AFTER);
  daemon.write(TONE_PATH, TONE_AFTER);
  for (const entry of [order, cancel, tone]) {
    t.match(
      resultOf(await registry.unregister(entry.resource_id, entry.revision_id)),
      { resource_id: entry.resource_id, removed_revision: entry.revision_id },
      `${entry.name} is unregistered during the turn`,
    );
  }
  const orderAfter = await capture('tool', 'order_status', ORDER_PATH, 'Status of an order, by carrier');
  const cancelAfter = await capture('tool', 'cancel_order', CANCEL_PATH, 'Cancel an order');
  const toneAfter = await capture('skill', 'tone', TONE_PATH, 'House style');
  for (const [before, after, source] of [
    [order, orderAfter, ORDER_AFTER],
    [cancel, cancelAfter, CANCEL_AFTER],
    [tone, toneAfter, TONE_AFTER],
  ] as const) {
    t.not(after.resource_id, before.resource_id, `${after.name}: recreation has a new resource id`);
    t.not(after.revision_id, before.revision_id);
    t.equal(after.content_sha256, sha256Hex(source), `${after.name}: the changed bytes are captured`);
  }

  hold.release();
  const calls = new Map<string, EventFrame>();
  for (let index = 0; index < 2; index++) {
    const call = await who.client.event('turn.application_tool_call', WAIT_MS);
    calls.set(call.payload.name as string, call);
  }
  const orderCall = calls.get('order_status')!;
  const cancelCall = calls.get('cancel_order')!;
  t.match(orderCall.payload, {
    ...revisionTuple(order),
    arguments: { order_id: 'A-7' },
    timeout_ms: 120_000,
  });
  t.match(cancelCall.payload, {
    ...revisionTuple(cancel),
    arguments: { order_id: 'B-9', reason: 'late' },
    timeout_ms: 30_000,
  });

  const submit = (call: EventFrame, overrides: Record<string, unknown>) =>
    who.client.request('turn.application_tool_result', resultPayload(executor, call, overrides), {
      session: who.session,
      operation: op(),
    });
  const orderValue = { outcome: { status: 'success', value: { status: 'shipped' } } };
  const cancelValue = { outcome: { status: 'success', value: { cancelled: true } } };
  t.equal(
    codeOf(await submit(orderCall, { ...revisionTuple(orderAfter), ...orderValue })),
    'invalid_payload',
    'the replacement tuple does not answer the original call',
  );
  t.equal(
    codeOf(await submit(cancelCall, { revision_sha256: cancelAfter.revision_sha256, ...cancelValue })),
    'invalid_payload',
    'nor does the replacement revision hash',
  );
  t.equal(codeOf(await submit(orderCall, orderValue)), 'ok', 'the original tuple answers the first call');
  t.equal(codeOf(await submit(cancelCall, cancelValue)), 'ok', 'and the second');

  const continuation = await within(provider.nextRequest(), 'the continuation');
  t.strictSame(
    applicationTools(continuation.body),
    originalTools,
    'the continuation keeps the captured contracts',
  );
  t.match(continuation.body.messages, [
    { role: 'system', content: TONE_BEFORE },
    { role: 'user', content: 'What about my orders?' },
    { role: 'assistant', tool_calls: [{ id: 'call-order' }, { id: 'call-cancel' }] },
    { role: 'tool', tool_call_id: 'call-order', content: '{"status":"shipped"}' },
    { role: 'tool', tool_call_id: 'call-cancel', content: '{"cancelled":true}' },
  ]);
  t.equal(continuation.body.messages.length, 5);
  const terminal = await who.client.event('turn.terminal', WAIT_MS);
  t.match(terminal.payload, { status: 'completed', assistant_text: 'Order A-7 shipped; B-9 is cancelled.' });
  t.strictSame(
    terminal.payload.application_manifest,
    manifest,
    'the terminal carries the manifest as accepted',
  );

  const evidence = await who.client.call(
    'turn.application_evidence',
    { turn_id: acceptance.turn_id },
    { session: who.session, control: who.control },
  );
  t.strictSame(evidence.application_manifest, manifest);
  t.match(evidence.calls, [
    { name: 'order_status', ...revisionTuple(order), status: 'succeeded', external_effects: 'reported' },
    { name: 'cancel_order', ...revisionTuple(cancel), status: 'succeeded', external_effects: 'reported' },
  ]);

  // A later turn selects the replacements and sees only them.
  const current = resultOf<Listing>(await registry.list());
  t.not(current.registry_revision, accepted.registry_revision);
  const stale = await who.client.request(
    'turn.start',
    { prompt: 'And now?', application },
    { session: who.session, control: who.control, operation: op() },
  );
  t.equal(codeOf(stale), 'conflict', 'the accepted selection is stale for a new turn');
  provider.reply(['Tout est en ordre.']);
  const later = await who.client.response(
    who.client.send(
      'turn.start',
      {
        prompt: 'And now?',
        application: {
          ...application,
          expected_registry_revision: current.registry_revision,
          tool_authorizations: [revisionTuple(orderAfter), revisionTuple(cancelAfter)],
        },
      },
      { session: who.session, control: who.control, operation: op() },
    ),
    WAIT_MS,
  );
  t.equal(codeOf(later), 'ok');
  const laterRequest = await within(provider.nextRequest(), 'the later turn');
  t.strictSame(applicationTools(laterRequest.body), [
    toolDefinition('cancel_order', 'Cancel an order', CANCEL_AFTER),
    toolDefinition('order_status', 'Status of an order, by carrier', ORDER_AFTER),
  ]);
  t.equal(laterRequest.body.messages[0].role, 'system');
  t.equal(laterRequest.body.messages[0].content, TONE_AFTER, 'the later turn has the new instructions');
  t.match((await who.client.event('turn.terminal', WAIT_MS)).payload, { status: 'completed' });

  const received = everythingReceived(who.client);
  for (const secret of [ORDER_PATH, CANCEL_PATH, TONE_PATH, TONE_BEFORE.trim(), TONE_AFTER.trim()]) {
    t.notOk(received.includes(secret), `no frame carries ${JSON.stringify(secret)}`);
    t.notOk(daemon.magid.stderr.includes(secret), `no log line carries ${JSON.stringify(secret)}`);
  }
  t.notOk(received.includes('input_schema'), 'no frame carries a contract');
  t.equal(provider.unexpected, 0);
  t.equal(provider.pending, 0, 'every scripted response was used');
});
