/**
 * Type tests of the client library: `npx tsc --noEmit` checks the `expectTypeOf` and `@ts-expect-error`
 * lines (an `@ts-expect-error` that no longer finds an error fails the typecheck); tap runs the rest.
 */
import { expectTypeOf } from 'expect-type';
import t from 'tap';
import {
  type ActiveTurnSnapshot,
  type ApplicationManifest,
  type CallEvidence,
  type CallStatus,
  type ClaimSnapshot,
  type DefinedTool,
  defineTool,
  type EvidenceResult,
  type ExternalEffects,
  type Session,
  type SessionCloseResult,
  type TerminalPayload,
  type ToolCall,
  type ToolHandler,
  type TurnFailureCode,
  type TurnRun,
  Type,
  toolHandlers,
} from '../../client/index.js';

const Input = Type.Object(
  {
    query: Type.String({ maxLength: 200 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
    exact: Type.Boolean(),
  },
  { additionalProperties: false },
);
const Output = Type.Object(
  { path: Type.String({ maxLength: 1024 }), found: Type.Boolean() },
  { additionalProperties: false },
);

type Args = { query: string; limit?: number; exact: boolean };
type Result = { path: string; found: boolean };

const findNote = defineTool({
  name: 'find_note',
  description: 'Find a note',
  input: Input,
  output: Output,
  handler: (args, call) => {
    expectTypeOf(args).toEqualTypeOf<Args>();
    expectTypeOf(call).toEqualTypeOf<ToolCall>();
    return { path: `notes/${args.query}.md`, found: args.limit === undefined };
  },
});

t.test('a defined tool: handler arguments and result are inferred from its schemas', async (t) => {
  expectTypeOf(findNote).toExtend<DefinedTool<typeof Input, typeof Output>>();
  expectTypeOf(findNote.handler).parameter(0).toEqualTypeOf<Args>();
  expectTypeOf(findNote.handler).returns.toEqualTypeOf<Result | Promise<Result>>();
  expectTypeOf(findNote.source).toEqualTypeOf<{ readonly kind: 'inline'; readonly content: string }>();
  const signal = new AbortController().signal;
  const call = { sessionId: 's', turnId: 't', callId: 'c', name: 'find_note', timeoutMs: 1000, signal };
  t.same(await findNote.handler({ query: 'tea', exact: true }, call), { path: 'notes/tea.md', found: true });
});

t.test('a handler of the wrong shape does not compile', async (t) => {
  const closed = { additionalProperties: false } as const;
  const tools = [
    defineTool({
      name: 'wrong_argument',
      description: '',
      input: Input,
      output: Output,
      // @ts-expect-error: `path` is not an argument of this tool
      handler: (args) => ({ path: args.path, found: true }),
    }),
    defineTool({
      name: 'wrong_argument_type',
      description: '',
      input: Input,
      output: Output,
      handler: (args) => {
        // @ts-expect-error: `exact` is a boolean
        const exact: string = args.exact;
        return { path: exact, found: true };
      },
    }),
    defineTool({
      name: 'wrong_result_type',
      description: '',
      input: Input,
      output: Output,
      // @ts-expect-error: `found` is a boolean
      handler: () => ({ path: 'a', found: 'yes' }),
    }),
    defineTool({
      name: 'missing_result',
      description: '',
      input: Input,
      output: Output,
      // @ts-expect-error: `found` is required
      handler: async () => ({ path: 'a' }),
    }),
  ];
  t.equal(tools.length, 4, 'the ill-typed handlers are defined anyway: their schemas are valid');

  t.throws(() =>
    defineTool({
      name: 'nested',
      description: '',
      // @ts-expect-error: contract properties are strings, booleans and integers, never objects
      input: Type.Object({ inner: Type.Object({}, closed) }, closed),
      output: Type.Object({}, closed),
      handler: () => ({}),
    }),
  );
  t.throws(() =>
    defineTool({
      name: 'fraction',
      description: '',
      // @ts-expect-error: `Type.Number` is not a contract property (integers only)
      input: Type.Object({ ratio: Type.Number() }, closed),
      output: Type.Object({}, closed),
      handler: () => ({}),
    }),
  );
  t.throws(() =>
    defineTool({
      name: 'listed',
      description: '',
      // @ts-expect-error: no arrays
      input: Type.Object({ tags: Type.Array(Type.String({ maxLength: 8 })) }, closed),
      output: Type.Object({}, closed),
      handler: () => ({}),
    }),
  );
});

t.test('tools of any schemas make the handlers an executor takes', async (t) => {
  const ping = defineTool({
    name: 'ping',
    description: '',
    input: Type.Object({}, { additionalProperties: false }),
    output: Type.Object(
      { at: Type.Integer({ minimum: 0, maximum: 2 ** 40 }) },
      { additionalProperties: false },
    ),
    handler: () => ({ at: 1 }),
  });
  const handlers = toolHandlers([findNote, ping]);
  expectTypeOf(handlers).toEqualTypeOf<Record<string, ToolHandler>>();
  expectTypeOf<Session['registerTool']>().toBeCallableWith(findNote);
  t.same(Object.keys(handlers), ['find_note', 'ping']);
});

t.test('states are string unions', async (t) => {
  expectTypeOf<CallEvidence['status']>().toEqualTypeOf<CallStatus>();
  expectTypeOf<CallStatus>().toEqualTypeOf<
    'waiting_for_executor' | 'pending' | 'succeeded' | 'failed' | 'cancelled'
  >();
  expectTypeOf<CallEvidence['external_effects']>().toEqualTypeOf<ExternalEffects>();
  expectTypeOf<ExternalEffects>().toEqualTypeOf<'not_dispatched' | 'uncertain' | 'reported'>();
  expectTypeOf<CallEvidence['wait_kind']>().toEqualTypeOf<'availability' | 'execution' | null>();
  expectTypeOf<TerminalPayload['status']>().toEqualTypeOf<'completed' | 'failed' | 'cancelled'>();
  expectTypeOf<TurnFailureCode>().toEqualTypeOf<
    | 'provider_error'
    | 'tool_timeout'
    | 'executor_unavailable'
    | 'limit_exceeded'
    | 'interrupted'
    | 'storage_full'
    | 'internal_error'
  >();
  expectTypeOf<SessionCloseResult['status']>().toEqualTypeOf<'closing' | 'closed'>();

  // @ts-expect-error: `done` is no call status
  const status: CallEvidence['status'] = 'done';
  // @ts-expect-error: `none` is no external effect
  const effects: ExternalEffects = 'none';
  // @ts-expect-error: a terminal is never `running`
  const ending: TerminalPayload['status'] = 'running';
  t.same([status, effects, ending], ['done', 'none', 'running'], 'what the compiler refused still runs');
  const calls: CallEvidence[] = [];
  // @ts-expect-error: comparing with a status there is not is refused
  const done = calls.filter((call) => call.status === 'done');
  t.same(done, []);
});

t.test('claim snapshots and runs are typed', async (t) => {
  expectTypeOf<ClaimSnapshot['turn']>().toEqualTypeOf<ActiveTurnSnapshot | null>();
  expectTypeOf<ClaimSnapshot['terminal']>().toEqualTypeOf<TerminalPayload | null>();
  expectTypeOf<ActiveTurnSnapshot['status']>().toEqualTypeOf<'running'>();
  expectTypeOf<ActiveTurnSnapshot['sequence']>().toEqualTypeOf<number>();
  expectTypeOf<Session['claim']['snapshot']>().toEqualTypeOf<ClaimSnapshot>();
  expectTypeOf<Session['run']>().returns.resolves.toEqualTypeOf<TurnRun>();
  expectTypeOf<TurnRun['terminal']>().toEqualTypeOf<TerminalPayload>();
  expectTypeOf<TurnRun['text']>().toEqualTypeOf<string>();
  expectTypeOf<TerminalPayload['application_manifest']>().toEqualTypeOf<
    ApplicationManifest | null | undefined
  >();
  expectTypeOf<EvidenceResult['application_manifest']>().toEqualTypeOf<ApplicationManifest | null>();
  expectTypeOf<ApplicationManifest['tools'][number]['timeout_ms']>().toEqualTypeOf<number>();
  expectTypeOf<ApplicationManifest['profile']>().toEqualTypeOf<'application_resources_v1'>();
  const snapshot: ClaimSnapshot = { turn: null, terminal: null };
  t.same(snapshot, { turn: null, terminal: null });
});
