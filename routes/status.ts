import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ProviderCredentials } from '../core/auth/provider-credentials.js';
import { PROVIDER_KINDS } from '../core/provider/provider-definition.js';
import type { ProviderRouter } from '../core/provider/provider-router.js';
import { AuthReadiness } from './auth-schemas.js';
import { EmptyPayload } from './schemas.js';

/** What became of an `AGENTS.md` (core/agent/instructions-state.ts). */
const InstructionsState = {
  state: Type.Union([
    Type.Literal('absent'),
    Type.Literal('empty'),
    Type.Literal('used'),
    Type.Literal('cut'),
    Type.Literal('refused'),
  ]),
  bytes: Type.Integer(),
  reason: Type.Union([Type.String(), Type.Null()]),
  linked: Type.Boolean(),
};

const Room = {
  retained: Type.Integer(),
  bound: Type.Integer(),
  bytes: Type.Integer(),
  bytes_bound: Type.Integer(),
  saturated: Type.Boolean(),
};
const FreesInMs = Type.Union([Type.Integer(), Type.Null()]);

/** What the daemon retains against its bounds: the operation table's stores and the turn evidence. */
const Retention = Type.Object({
  operations: Type.Object({ ...Room, frees_in_ms: FreesInMs }),
  /** The sessions' and executors' recovery slots that hold outcomes, what they hold, how many are full. */
  recovery_slots: Type.Object({
    slots: Type.Integer(),
    retained: Type.Integer(),
    bytes: Type.Integer(),
    full: Type.Integer(),
  }),
  refusals: Type.Object({ retained: Type.Integer(), bound: Type.Integer(), saturated: Type.Boolean() }),
  connections_at_share: Type.Integer(),
  evidence_turns: Type.Object({
    retained: Type.Integer(),
    bound: Type.Integer(),
    saturated: Type.Boolean(),
    frees_in_ms: FreesInMs,
  }),
});

const Result = Type.Object({
  ready: Type.Boolean(),
  /** A hash of the real path of the home this daemon serves, as in `initialize`. */
  home_id: Type.String(),
  provider: Type.Object({
    kind: Type.String(),
    model: Type.Union([Type.String(), Type.Null()]),
    configured: Type.Boolean(),
  }),
  auth: AuthReadiness,
  /** With named providers only: each, in the configuration's order, with its API and its credential. */
  providers: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        kind: Type.String(),
        default: Type.Boolean(),
        auth: AuthReadiness,
      }),
    ),
  ),
  sessions: Type.Integer(),
  active_turns: Type.Integer(),
  tools: Type.Object({
    /** The built-in tools every turn offers the model, in their fixed order. */
    builtin: Type.Array(Type.String()),
    /** `off` unless configured; `unavailable` when configured but the sandbox cannot run here. */
    run_command: Type.Union([Type.Literal('off'), Type.Literal('unavailable'), Type.Literal('offered')]),
  }),
  /** The command sandbox: why `run_command` is unavailable, or its bounds and what its commands do now. */
  sandbox: Type.Object({
    run_command: Type.Union([Type.Literal('off'), Type.Literal('unavailable'), Type.Literal('offered')]),
    reason: Type.Union([
      Type.Literal('not_installed'),
      Type.Literal('cannot_start'),
      Type.Literal('unsupported_architecture'),
      Type.Null(),
    ]),
    bounds: Type.Union([
      Type.Object({
        concurrent_commands: Type.Integer(),
        memory_bytes: Type.Integer(),
        processes: Type.Union([Type.Integer(), Type.Null()]),
        file_size_bytes: Type.Integer(),
        core_dump_bytes: Type.Literal(0),
        enforced_by: Type.Union([
          Type.Literal('cgroup_v1'),
          Type.Literal('cgroup_v2'),
          Type.Literal('rlimit'),
        ]),
      }),
      Type.Null(),
    ]),
    commands: Type.Union([
      Type.Object({
        slots_in_use: Type.Integer(),
        waiting: Type.Integer(),
        waiting_sessions: Type.Integer(),
        scanning: Type.Integer(),
      }),
      Type.Null(),
    ]),
  }),
  /** Each configured MCP server: its name, state, how many tools it offers now and why it is away. */
  mcp_servers: Type.Array(
    Type.Object({
      name: Type.String(),
      state: Type.Union([
        Type.Literal('starting'),
        Type.Literal('ready'),
        Type.Literal('restarting'),
        Type.Literal('failed'),
        Type.Literal('stopped'),
      ]),
      tools: Type.Integer(),
      /** While `failed` or `restarting`: one line of the daemon's own words. */
      reason: Type.Optional(Type.String()),
    }),
  ),
  /** The installed skills read at startup: loaded by name, the rest by path with a reason. */
  skills: Type.Object({
    loaded: Type.Array(Type.String()),
    skipped: Type.Array(Type.Object({ path: Type.String(), reason: Type.String() })),
    omitted: Type.Integer(),
  }),
  /** The home's `AGENTS.md` as read at startup, and the last read of each recent workspace's. */
  instructions: Type.Object({
    home: Type.Object(InstructionsState),
    workspaces: Type.Array(Type.Object({ workspace: Type.String(), ...InstructionsState })),
  }),
  retention: Retention,
  /** `full` while the last write to the history failed because the disk was full: turns are refused then. */
  storage: Type.Object({ full: Type.Boolean() }),
});

/**
 * `status`: readiness, from memory, one read of the store and one of the settings file (the current model
 * selection); no network, no writes.
 */
const status: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/status',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async () => {
      await fastify.modelSettings.reload();
      const { kind, router } = fastify.provider;
      const model = fastify.modelSettings.selection(null)?.model ?? null;
      // Configured: the selected model names a provider that is (the default one, or `NAME/`'s).
      const route = model === null ? null : (router?.route(model) ?? null);
      const credentials = fastify.providerCredentials;
      return {
        ready: route !== null,
        home_id: fastify.homeId,
        provider: {
          kind: route ? PROVIDER_KINDS[route.provider.api] : kind,
          model,
          configured: route !== null,
        },
        auth: credentials.of(undefined).readiness(),
        ...(credentials.hasNamed && router ? { providers: namedProviders(router, credentials) } : {}),
        sessions: fastify.history.countSessions(),
        active_turns: fastify.turns.activeCount,
        tools: { builtin: [...fastify.agent.toolbox.offered], run_command: fastify.agent.runCommand },
        sandbox: fastify.agent.sandbox,
        mcp_servers: fastify.agent.mcp?.status() ?? [],
        skills: fastify.agent.skills,
        instructions: {
          home: fastify.agent.homeInstructions,
          workspaces: fastify.agent.toolbox.workspaceInstructionsReport.list(),
        },
        retention: { ...fastify.operations.stats(), evidence_turns: fastify.evidence.stats() },
        storage: { full: fastify.history.writer.diskFull },
      };
    },
  );
};

export default status;

function namedProviders(router: ProviderRouter, credentials: ProviderCredentials) {
  const defaultName = router.defaultProvider?.name ?? null;
  return router.providers.flatMap(({ name, api }) =>
    name === null
      ? []
      : [
          {
            name,
            kind: PROVIDER_KINDS[api],
            default: name === defaultName,
            auth: credentials.of(name).readiness(),
          },
        ],
  );
}
