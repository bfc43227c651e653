import { createHash } from 'node:crypto';
import t from 'tap';
import { Type } from 'typebox';
import {
  type ContractProperty,
  defineTool,
  ToolContractError,
  toolHandlers,
} from '../../client/define-tool.js';
import { MagiClient } from '../../client/magi-client.js';
import { PROFILE_LIMITS } from '../../core/limits.js';
import {
  parseToolContract,
  SCHEMA_MAX_PROPERTIES,
  schemaRefusalMessage,
  TOOL_CONTRACT_REFUSALS,
} from '../../core/resources/tool-contract.js';
import { turnDaemon } from '../routes/turn.fixture.js';

const FindNoteInput = Type.Object(
  {
    query: Type.String({ maxLength: 200 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
    exact: Type.Boolean(),
  },
  { additionalProperties: false },
);
const FindNoteOutput = Type.Object(
  { path: Type.String({ maxLength: 1024 }), found: Type.Boolean() },
  { additionalProperties: false },
);

function findNote(options: { timeoutMs?: number } = {}) {
  return defineTool({
    name: 'find_note',
    description: 'Find a note',
    input: FindNoteInput,
    output: FindNoteOutput,
    ...options,
    handler: (args) => ({ path: `notes/${args.query}.md`, found: args.exact }),
  });
}

t.test('the contract is the JSON the daemon accepts, exactly as its checker reads it', async (t) => {
  const tool = findNote({ timeoutMs: 5_000 });
  t.same(JSON.parse(tool.contract), {
    input_schema: {
      type: 'object',
      required: ['query', 'exact'],
      properties: {
        query: { type: 'string', maxLength: 200 },
        limit: { type: 'integer', minimum: 1, maximum: 20 },
        exact: { type: 'boolean' },
      },
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      required: ['path', 'found'],
      properties: { path: { type: 'string', maxLength: 1024 }, found: { type: 'boolean' } },
      additionalProperties: false,
    },
    timeout_ms: 5_000,
  });
  const contract = parseToolContract(tool.contract);
  t.same(contract.input_schema.required, ['query', 'exact'], 'an optional property is not required');
  t.equal(contract.timeout_ms, 5_000);
  t.same(tool.source, { kind: 'inline', content: tool.contract }, 'the registration source');
  t.equal(tool.name, 'find_note');
  t.ok(Object.isFrozen(tool) && Object.isFrozen(tool.source), 'frozen');
  t.notOk(tool.contract.includes('~kind'), "TypeBox's own markers stay out of the JSON");

  const untimed = findNote();
  t.notOk('timeout_ms' in JSON.parse(untimed.contract), 'no timeout: the daemon applies its default');
  t.equal(parseToolContract(untimed.contract).timeout_ms, PROFILE_LIMITS.tool_timeout_ms_default);
  t.equal(untimed.timeoutMs, undefined);

  const empty = defineTool({
    name: 'ping',
    description: '',
    input: Type.Object({}, { additionalProperties: false }),
    output: Type.Object({}, { additionalProperties: false }),
    handler: () => ({}),
  });
  t.same(parseToolContract(empty.contract).input_schema.properties, {}, 'a tool without arguments');
});

/** The ToolContractError `define` throws, for its reason. */
function refusal(define: () => unknown): ToolContractError {
  try {
    define();
  } catch (error) {
    if (error instanceof ToolContractError) return error;
    throw error;
  }
  throw new Error('defineTool accepted it');
}

t.test('a schema outside the strict subset throws the daemon reason at definition', async (t) => {
  const handler = () => ({});
  const closed = <Properties extends Record<string, ContractProperty>>(properties: Properties) =>
    Type.Object(properties, { additionalProperties: false });
  const noMaxLength = refusal(() =>
    defineTool({
      name: 'loose',
      description: 'x',
      input: closed({ text: Type.String() }),
      output: closed({}),
      handler,
    }),
  );
  t.equal(noMaxLength.name, 'ToolContractError');
  t.equal(noMaxLength.tool, 'loose');
  t.equal(noMaxLength.reason, schemaRefusalMessage('input_schema', 'string_max_length'));
  t.equal(noMaxLength.message, `tool "loose": ${noMaxLength.reason}`);

  const open = refusal(() =>
    defineTool({
      name: 'open',
      description: 'x',
      input: closed({}),
      output: Type.Object({ ok: Type.Boolean() }),
      handler: () => ({ ok: true }),
    }),
  );
  t.equal(open.reason, schemaRefusalMessage('output_schema', 'additional_properties'));

  const unbounded = refusal(() =>
    defineTool({
      name: 'count',
      description: 'x',
      input: closed({ n: Type.Integer({ minimum: 0 }) }),
      output: closed({}),
      handler,
    }),
  );
  t.equal(unbounded.reason, schemaRefusalMessage('input_schema', 'integer_bounds'));

  const described = refusal(() =>
    defineTool({
      name: 'described',
      description: 'x',
      input: closed({ q: Type.String({ maxLength: 10, description: 'the query' }) }),
      output: closed({}),
      handler,
    }),
  );
  t.equal(described.reason, schemaRefusalMessage('input_schema', 'property_keyword'));

  const tooLong = refusal(() =>
    defineTool({
      name: 'long',
      description: 'x',
      input: closed({ q: Type.String({ maxLength: PROFILE_LIMITS.schema_string_max_length_max + 1 }) }),
      output: closed({}),
      handler,
    }),
  );
  t.equal(tooLong.reason, schemaRefusalMessage('input_schema', 'string_max_length'));

  const many: Record<string, ReturnType<typeof Type.Boolean>> = {};
  for (let index = 0; index <= SCHEMA_MAX_PROPERTIES; index++) many[`p${index}`] = Type.Boolean();
  const wide = refusal(() =>
    defineTool({ name: 'wide', description: 'x', input: closed(many), output: closed({}), handler }),
  );
  t.equal(wide.reason, schemaRefusalMessage('input_schema', 'too_many_properties'));

  const slow = refusal(() =>
    defineTool({
      name: 'slow',
      description: 'x',
      input: closed({}),
      output: closed({}),
      timeoutMs: 999,
      handler,
    }),
  );
  t.equal(slow.reason, TOOL_CONTRACT_REFUSALS.timeout);

  const badName = refusal(() =>
    defineTool({ name: 'Find-Note', description: 'x', input: closed({}), output: closed({}), handler }),
  );
  t.match(badName.reason, /name/);
  const badDescription = refusal(() =>
    defineTool({ name: 'nul', description: 'a\u0000b', input: closed({}), output: closed({}), handler }),
  );
  t.match(badDescription.reason, /description/);
});

t.test('toolHandlers maps each tool to its handler by name, refusing a repeated name', async (t) => {
  const tool = findNote();
  const handlers = toolHandlers([tool]);
  t.same(Object.keys(handlers), ['find_note']);
  const signal = new AbortController().signal;
  const call = { sessionId: 's', turnId: 't', callId: 'c', name: 'find_note', timeoutMs: 1000, signal };
  t.same(await handlers.find_note!({ query: 'tea', exact: true }, call), {
    path: 'notes/tea.md',
    found: true,
  });
  const again = refusal(() => toolHandlers([tool, findNote({ timeoutMs: 2000 })]));
  t.equal(again.tool, 'find_note');
});

t.test('a defined tool registers as is, and its calls reach the handler with typed arguments', async (t) => {
  const { daemon, provider } = await turnDaemon(t);
  const client = await MagiClient.over(() => daemon.open('socket'));
  const session = await client.createSession(daemon.workspace, 'notes');
  const seen: Array<{ query: string; limit: number | undefined; exact: boolean }> = [];
  const tool = defineTool({
    name: 'find_note',
    description: 'Find a note',
    input: FindNoteInput,
    output: FindNoteOutput,
    timeoutMs: 30_000,
    handler: async ({ query, limit, exact }, call) => {
      seen.push({ query, limit, exact });
      t.equal(call.timeoutMs, 30_000, 'the call carries the contract timeout');
      return { path: `notes/${query}.md`, found: true };
    },
  });
  const entry = await session.registerTool(tool);
  t.match(entry, { kind: 'tool', name: 'find_note', description: 'Find a note' });
  t.equal(
    entry.content_sha256,
    createHash('sha256').update(tool.contract).digest('hex'),
    'the daemon captured the contract JSON byte for byte',
  );
  const replaced = await session.registerTool(tool);
  t.equal(replaced.resource_id, entry.resource_id, 'registering it again replaces its revision');

  const executor = await client.startExecutor(toolHandlers([tool]));
  t.teardown(() => executor.close());
  provider
    .replyToolCalls([{ id: 'c1', name: 'find_note', arguments: '{"query":"tea","exact":false,"limit":3}' }])
    .reply(['Found ', 'it']);
  const run = await session.run('Where is my tea note?', { executor });
  t.same(seen, [{ query: 'tea', limit: 3, exact: false }], 'the handler ran once, with the arguments');
  t.equal(run.terminal.status, 'completed');
  t.equal(run.text, 'Found it');
  const requests = [await provider.nextRequest(), await provider.nextRequest()];
  const toolMessage = requests[1]!.body.messages.find((message: { role: string }) => message.role === 'tool');
  t.same(
    JSON.parse(toolMessage.content),
    { path: 'notes/tea.md', found: true },
    'the result reached the model',
  );
  const evidence = await session.evidence(run.accepted.turn_id);
  t.match(evidence.calls, [{ name: 'find_note', status: 'succeeded', external_effects: 'reported' }]);
});
