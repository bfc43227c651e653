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
 * A stand-in for a model on loopback, speaking the Chat Completions streaming API. Asked about a `.md`
 * file by name, it calls the daemon's `read_file` on it and answers with the file's first line of text;
 * asked anything else with the application's `find_note` offered, it calls it with `{"query":"tea"}` and
 * answers with a sentence naming the result's `path`; asked anything else, it answers `Hello.`. It listens on
 * `port` of 127.0.0.1 (by default one the system picks).
 */
export async function startScriptedProvider(port = 0): Promise<ScriptedProvider> {
  const server = createServer((request, response) => void answer(request, response));
  server.listen(port, '127.0.0.1');
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
  const offered = new Set(body.tools?.map((tool) => tool.function.name));
  const asked = body.messages?.findLast((message) => message.role === 'user')?.content ?? '';
  const file = /[\w./-]+\.md/.exec(asked)?.[0];
  if (last?.role === 'tool') {
    for (const piece of answerFrom(JSON.parse(last.content ?? '{}'))) send(response, { content: piece });
    send(response, {}, 'stop');
  } else if (file !== undefined && offered.has('read_file')) {
    callTool(response, 'read_file', { path: file });
  } else if (offered.has('find_note')) {
    callTool(response, 'find_note', { query: 'tea' });
  } else {
    send(response, { content: 'Hello.' });
    send(response, {}, 'stop');
  }
  response.end('data: [DONE]\n\n');
}

/** The answer to a tool's result: a `read_file` window's first line of text, or `find_note`'s path. */
function answerFrom(result: { content?: string; path?: string }): string[] {
  if (typeof result.content === 'string') {
    const line = result.content.split('\n').find((text) => text.trim() !== '' && !text.startsWith('#'));
    return ['It says: ', `${line?.trim() ?? 'nothing'}`];
  }
  return ['Your note about tea ', `is ${result.path ?? 'nowhere'}.`];
}

function callTool(response: ServerResponse, name: string, args: Record<string, unknown>): void {
  send(response, {
    tool_calls: [
      { index: 0, id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } },
    ],
  });
  send(response, {}, 'tool_calls');
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
