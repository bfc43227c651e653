import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BENCH_ANSWER, BENCH_TOOL_ARGUMENTS, BENCH_TOOL_NAME } from './turn-fixture.js';

/**
 * The provider of the operations bench: a chat completions server on loopback that answers each turn by
 * the first word of its prompt, at once. `plain` gets the bench's answer; `builtin` a call of the daemon's own
 * `list_directory` on the workspace, then a text; `app` a call of the application's `lookup`, then a
 * text; `slow` a first delta and then nothing, until the daemon ends the request (the turn is stopped or
 * its session closed). A request whose last message is a tool's gets the text. Every other request is
 * answered 400. Prints its base URL when ready; exits when stdin ends.
 */
interface Message {
  role?: unknown;
  content?: unknown;
}

const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'bench-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  })}\n\n`;

const TEXT_STREAM = `${chunk({ role: 'assistant', content: BENCH_ANSWER }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`;
const SLOW_START = chunk({ role: 'assistant', content: 'Working' }, null);
const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function callStream(name: string, args: string): string {
  const call = { index: 0, id: 'call-bench', type: 'function', function: { name, arguments: args } };
  return `${chunk({ role: 'assistant', content: null, tool_calls: [call] }, null)}${chunk({}, 'tool_calls')}data: [DONE]\n\n`;
}

const STREAMS: Record<string, string> = {
  plain: TEXT_STREAM,
  builtin: callStream('list_directory', '{"path":"."}'),
  app: callStream(BENCH_TOOL_NAME, BENCH_TOOL_ARGUMENTS),
};

/** The answer to one chat completions body: a whole stream, 'slow', or null for a request refused. */
function answer(body: Buffer): string | 'slow' | null {
  let messages: Message[];
  try {
    messages = (JSON.parse(body.toString('utf8')) as { messages: Message[] }).messages;
  } catch {
    return null;
  }
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const last = messages[messages.length - 1]!;
  if (last.role === 'tool') return TEXT_STREAM;
  if (last.role !== 'user' || typeof last.content !== 'string') return null;
  const kind = last.content.split(' ', 1)[0]!;
  if (kind === 'slow') return 'slow';
  return STREAMS[kind] ?? null;
}

function serve(request: IncomingMessage, response: ServerResponse): void {
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    response.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (piece: Buffer) => chunks.push(piece));
  request.on('end', () => {
    const answered = answer(Buffer.concat(chunks));
    if (answered === null) {
      response.writeHead(400, { 'content-type': 'application/json', 'x-should-retry': 'false' });
      response.end('{"error":{"message":"not a bench request"}}');
      return;
    }
    response.writeHead(200, STREAM_HEADERS);
    if (answered === 'slow') response.write(SLOW_START);
    else response.end(answered);
  });
}

const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, serve);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`http://127.0.0.1:${port}/v1\n`);
});

process.stdin.on('end', () => {
  server.closeAllConnections();
  server.close();
  process.exit(0);
});
process.stdin.resume();
