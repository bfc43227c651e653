import type { Test } from 'tap';
import type { EventFrame, WireClient } from '../../client/wire-client.js';
import { BUILTIN_TOOL_NAMES } from '../../core/resources/builtin-tools.js';
import { op, startDaemon, type TestDaemon, type Transport } from '../helpers/daemon.js';
import { chunk, done, type Hold, sse, stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import {
  type Controller,
  controller,
  listed,
  registered,
  skillResource,
  TOOL_CONTRACT,
  toolResource,
} from './session.resources.fixture.js';

export { TOOL_CONTRACT };

export interface TurnDaemon {
  daemon: TestDaemon;
  provider: ScriptedProvider;
}

/** A daemon whose provider is a scripted chat completions server on loopback. */
export async function turnDaemon(t: Test): Promise<TurnDaemon> {
  const provider = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
  });
  return { daemon, provider };
}

export interface Executor {
  executor_id: string;
  executor_generation: number;
  resume_secret: string;
}

/** Creates and confirms an executor on `client`. */
export async function confirmedExecutor(client: WireClient): Promise<Executor> {
  const created = await client.call('executor.create', {}, { operation: op() });
  const secret = created.resume_secret as string;
  await client.call(
    'executor.confirm',
    { executor_id: created.executor_id, resume_secret: secret },
    { operation: op() },
  );
  return {
    executor_id: created.executor_id as string,
    executor_generation: created.executor_generation as number,
    resume_secret: secret,
  };
}

export interface ApplicationSession {
  who: Controller;
  executor: Executor;
  /** The `application` member selecting the session's current registry. */
  application: Record<string, unknown>;
}

/**
 * A controller holding an executor, with the `lookup` tool (TOOL_CONTRACT: `{path}` in, `{}` out) and
 * the `style` skill registered, and the application member that selects exactly them.
 */
export async function applicationSession(
  daemon: TestDaemon,
  transport: Transport,
): Promise<ApplicationSession> {
  const who = await controller(daemon, transport);
  const executor = await confirmedExecutor(who.client);
  const tool = await registered(who, toolResource('lookup'));
  await registered(who, skillResource('style', { content: 'Answer briefly.' }));
  const listing = await listed(who);
  return {
    who,
    executor,
    application: {
      expected_registry_revision: listing.registry_revision,
      executor_id: executor.executor_id,
      executor_generation: executor.executor_generation,
      tool_authorizations: [
        {
          resource_id: tool.entry.resource_id,
          revision_id: tool.entry.revision_id,
          revision_sha256: tool.entry.revision_sha256,
        },
      ],
    },
  };
}

/** The `turn.application_tool_result` payload answering `call`, echoing its binding; `overrides` replace members. */
export function resultPayload(executor: Executor, call: EventFrame, overrides: Record<string, unknown> = {}) {
  return {
    turn_id: call.payload.turn_id,
    call_id: call.payload.call_id,
    executor_id: executor.executor_id,
    executor_generation: executor.executor_generation,
    resource_id: call.payload.resource_id,
    revision_id: call.payload.revision_id,
    revision_sha256: call.payload.revision_sha256,
    outcome: { status: 'success', value: {} },
    ...overrides,
  };
}

/** Submits the result of `call` on `client` as its executor, in the call's session. */
export function submitResult(
  client: WireClient,
  session: string,
  executor: Executor,
  call: EventFrame,
  overrides: Record<string, unknown> = {},
  operation = op(),
) {
  return client.request('turn.application_tool_result', resultPayload(executor, call, overrides), {
    session,
    operation,
  });
}

/**
 * Queues a model answer that calls `lookup` once, held before its first byte until the hold is released:
 * time for a test to change the world (an executor leaving) before the call is made.
 */
export function heldLookupCall(provider: ScriptedProvider): Hold {
  const hold = provider.hold();
  provider.script(
    stream([
      hold,
      sse(
        chunk(
          {
            tool_calls: [
              {
                index: 0,
                id: 'c1',
                type: 'function',
                function: { name: 'lookup', arguments: '{"path":"a"}' },
              },
            ],
          },
          { finishReason: 'tool_calls' },
        ),
      ),
      done(),
    ]),
  );
  return hold;
}

/** How many `event` frames `client` has received in all. */
export function eventCount(client: WireClient, event: string): number {
  return client.received
    .flatMap((text) => text.split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as { type: string; event?: string })
    .filter((frame) => frame.type === 'event' && frame.event === event).length;
}

export function startTurn(who: Controller, payload: Record<string, unknown>, operation = op()) {
  return who.client.request('turn.start', payload, {
    session: who.session,
    control: who.control,
    operation,
  });
}

interface ChatTool {
  type: string;
  function: { name: string; description?: string; parameters?: unknown };
}

/** A provider request body's tools that are not the daemon's own: the application's, in their order. */
export function applicationTools(body: { tools?: ChatTool[] }): ChatTool[] {
  const builtins: readonly string[] = BUILTIN_TOOL_NAMES;
  return (body.tools ?? []).filter((tool) => !builtins.includes(tool.function.name));
}
