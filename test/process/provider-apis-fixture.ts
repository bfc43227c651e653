import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { messagesText, messagesToolUse } from '../helpers/messages-streams.js';
import { type ScriptedResponse, textStream, toolCallStream } from '../helpers/provider-streams.js';
import { ResponsesStream } from '../helpers/responses-streams.js';
import type { RecordedRequest } from '../helpers/scripted-provider.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { listing } from '../routes/catalog.fixture.js';
import type { Controller } from '../routes/session.resources.fixture.js';
import { type MagidProcess, shortTempDir, startDaemon } from './spawn-daemon.js';

export const OPENAI_KEY = 'sk-process-openai-5be1';
export const ANTHROPIC_KEY = 'sk-process-anthropic-0c9d';

export interface Call {
  id: string;
  name: string;
  arguments: string;
}

/** One API as a test drives it: its scripted server, a model on it, its rounds and its tool results. */
export interface ApiUnderTest {
  /** The provider's name in `providers`. */
  name: 'chat' | 'openai' | 'anthropic';
  /** The model a turn selects: `NAME/model`. */
  model: string;
  server: ScriptedProvider;
  calls(calls: readonly Call[]): ScriptedResponse;
  text(text: string): ScriptedResponse;
  /** The text the continuation request gave back for `callId`. */
  resultIn(request: RecordedRequest, callId: string): string | undefined;
}

export interface ProviderApisDaemon {
  magid: MagidProcess;
  home: string;
  workspace: string;
  apis: Record<ApiUnderTest['name'], ApiUnderTest>;
  /** A controller on a new profile connection that also negotiated reasoning summaries. */
  controller(): Promise<Controller>;
  /** Selects `model` for the next turns (the catalog was refreshed at start). */
  select(model: string): Promise<void>;
}

/**
 * `magid serve` with three named providers on loopback, one per API: `chat` (Chat Completions), `openai`
 * (Responses, its key in the environment, summaries read) and `anthropic` (Messages, its key in the
 * environment), and the catalog refreshed over all three.
 */
export async function providerApisDaemon(t: Test): Promise<ProviderApisDaemon> {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(home);
  mkdirSync(workspace);
  const servers = {
    chat: await ScriptedProvider.start(t),
    openai: await ScriptedProvider.start(t),
    anthropic: await ScriptedProvider.start(t),
  };
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      providers: {
        chat: { api: 'chat_completions', base_url: servers.chat.baseUrl },
        openai: {
          api: 'responses',
          base_url: servers.openai.baseUrl,
          api_key_env: 'TEST_OPENAI_KEY',
          reasoning_summary: true,
        },
        anthropic: {
          api: 'messages',
          base_url: servers.anthropic.baseUrl,
          api_key_env: 'TEST_ANTHROPIC_KEY',
        },
      },
    }),
  );
  const socket = join(root, 'd.sock');
  const { magid } = await startDaemon(t, {
    socket,
    home,
    args: ['--log-level', 'debug'],
    env: { TEST_OPENAI_KEY: OPENAI_KEY, TEST_ANTHROPIC_KEY: ANTHROPIC_KEY },
  });
  const connect = async (): Promise<{ client: WireClient; connectionId: string; instanceId: string }> => {
    const { client } = await connectSocket(socket);
    t.teardown(() => client.close());
    const init = await client.initialize(['application_resources_v1', 'provider_reasoning_summary']);
    return { client, connectionId: init.connection_id as string, instanceId: init.instance_id as string };
  };
  const admin = await connect();
  servers.chat.replyModels(listing(['scripted-chat']));
  servers.openai.replyModels(listing(['o4-mini']));
  servers.anthropic.replyModels(listing(['claude-test']));
  await admin.client.call('catalog.refresh', {}, { operation: op() });
  return {
    magid,
    home,
    workspace,
    apis: {
      chat: {
        name: 'chat',
        model: 'chat/scripted-chat',
        server: servers.chat,
        calls: (calls) => toolCallStream(calls),
        text: (text) => textStream([text]),
        resultIn: (request, callId) =>
          request.body.messages.find((message: { tool_call_id?: string }) => message.tool_call_id === callId)
            ?.content,
      },
      openai: {
        name: 'openai',
        model: 'openai/o4-mini',
        server: servers.openai,
        calls: (calls) => {
          const stream = new ResponsesStream().created();
          for (const [i, call] of calls.entries()) {
            stream.functionCall(`fc_${i}`, call.id, call.name, call.arguments);
          }
          return stream.completed();
        },
        text: (text) => new ResponsesStream().created().message('msg_1', [text]).completed(),
        resultIn: (request, callId) =>
          request.body.input.find(
            (item: { call_id?: string; type?: string }) =>
              item.type === 'function_call_output' && item.call_id === callId,
          )?.output,
      },
      anthropic: {
        name: 'anthropic',
        model: 'anthropic/claude-test',
        server: servers.anthropic,
        calls: (calls) =>
          messagesToolUse(calls.map((call) => ({ id: call.id, name: call.name, input: call.arguments }))),
        text: (text) => messagesText([text]),
        resultIn: (request, callId) =>
          request.body.messages
            .flatMap((message: { content: unknown }) =>
              Array.isArray(message.content) ? message.content : [],
            )
            .find(
              (block: { type?: string; tool_use_id?: string }) =>
                block.type === 'tool_result' && block.tool_use_id === callId,
            )?.content,
      },
    },
    controller: async () => {
      const { client, connectionId, instanceId } = await connect();
      const claimed = await claimedSession(client, workspace);
      return { client, ...claimed, connectionId, instanceId };
    },
    select: async (model) => {
      await admin.client.call(
        'settings.update',
        { workspace: null, changes: { model } },
        { operation: op() },
      );
    },
  };
}
