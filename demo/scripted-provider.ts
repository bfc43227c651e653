import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ChatRequest {
  messages?: Array<{ role: string; content?: string | null }>;
  tools?: Array<{ function: { name: string } }>;
}

export interface ScriptedProvider {
  /** `http://127.0.0.1:<port>/v1`, for `magid serve --provider-base-url`. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * A stand-in for a model on loopback, speaking the Chat Completions streaming API: asked with tools, it
 * calls the first tool with `{"query":"tea"}`; once that tool's result is in the conversation, it
 * answers with a sentence naming the result's `path`.
 */
export async function startScriptedProvider(): Promise<ScriptedProvider> {
  const server = createServer((request, response) => void answer(request, response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const piece of request) chunks.push(piece as Buffer);
  let body: ChatRequest;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
  } catch {
    response.writeHead(400).end();
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const last = body.messages?.at(-1);
  const tool = body.tools?.[0]?.function.name;
  if (last?.role === 'tool') {
    const path = (JSON.parse(last.content ?? '{}') as { path?: string }).path ?? 'nowhere';
    for (const piece of ['Your note about tea ', `is ${path}.`]) send(response, { content: piece });
    send(response, {}, 'stop');
  } else if (tool !== undefined) {
    send(response, {
      tool_calls: [
        { index: 0, id: 'call_1', type: 'function', function: { name: tool, arguments: '{"query":"tea"}' } },
      ],
    });
    send(response, {}, 'tool_calls');
  } else {
    send(response, { content: 'Hello.' });
    send(response, {}, 'stop');
  }
  response.end('data: [DONE]\n\n');
}

function send(response: ServerResponse, delta: object, finishReason: string | null = null): void {
  const chunk = {
    id: 'chatcmpl-demo',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'scripted',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  response.write(`data: ${JSON.stringify(chunk)}\n\n`);
}
