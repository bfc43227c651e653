import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BENCH_ANSWER, BENCH_TOOL_ARGUMENTS, BENCH_TOOL_NAME, CALL_ID_PREFIX } from './turn-fixture.js';

/**
 * The provider of the turn bench: a chat completions server on loopback that answers at once, each
 * answer streamed in one write. A request without a tool message gets one `lookup` call with arguments
 * `{"path":"a"}`; a request whose last message is a tool message gets a short text. Every other request
 * is answered 400.
 *
 * Each turn carries a tag: the prompt (the last user message), echoed back as the call id `call-<tag>`,
 * so that the continuation names it too. The server keeps, per tag, the time it spent on the turn's
 * requests (from the request's arrival to the end of its answer, body reading and parsing included) and
 * the request bytes it received, and it counts the connections it accepted; `GET /bench/times` hands
 * them out as `{"connections":n,"turns":[[tag, ns, bytes, requests], …]}` and starts again from zero.
 * Prints its base URL when ready; exits when stdin ends.
 */
interface Message {
  role?: unknown;
  content?: unknown;
  tool_call_id?: unknown;
}

interface Spent {
  ns: number;
  bytes: number;
  requests: number;
}

const spent = new Map<string, Spent>();
let connections = 0;

const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'bench-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  })}\n\n`;

function toolCallStream(tag: string): string {
  const call = {
    index: 0,
    id: `${CALL_ID_PREFIX}${tag}`,
    type: 'function',
    function: { name: BENCH_TOOL_NAME, arguments: BENCH_TOOL_ARGUMENTS },
  };
  return `${chunk({ role: 'assistant', content: null, tool_calls: [call] }, null)}${chunk({}, 'tool_calls')}data: [DONE]\n\n`;
}

const TEXT_STREAM = `${chunk({ role: 'assistant', content: BENCH_ANSWER }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`;
const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** The answer to one chat completions body and the turn's tag, or null for a request this server refuses. */
function answer(body: Buffer): { tag: string; stream: string } | null {
  let messages: Message[];
  try {
    messages = (JSON.parse(body.toString('utf8')) as { messages: Message[] }).messages;
  } catch {
    return null;
  }
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const last = messages[messages.length - 1]!;
  if (last.role === 'tool') {
    const id = String(last.tool_call_id);
    if (!id.startsWith(CALL_ID_PREFIX)) return null;
    return { tag: id.slice(CALL_ID_PREFIX.length), stream: TEXT_STREAM };
  }
  if (last.role !== 'user' || typeof last.content !== 'string') return null;
  if (messages.some((message) => message.role === 'tool')) return null;
  return { tag: last.content, stream: toolCallStream(last.content) };
}

function record(tag: string, ns: number, bytes: number): void {
  const entry = spent.get(tag);
  if (entry) {
    entry.ns += ns;
    entry.bytes += bytes;
    entry.requests++;
  } else spent.set(tag, { ns, bytes, requests: 1 });
}

function serve(request: IncomingMessage, response: ServerResponse): void {
  const arrived = process.hrtime.bigint();
  if (request.method === 'GET' && request.url === '/bench/times') {
    const turns = [...spent].map(([tag, entry]) => [tag, entry.ns, entry.bytes, entry.requests]);
    const body = JSON.stringify({ connections, turns });
    spent.clear();
    connections = 0;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
    return;
  }
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    response.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (piece: Buffer) => chunks.push(piece));
  request.on('end', () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const answered = answer(body);
    if (answered === null) {
      response.writeHead(400, { 'content-type': 'application/json', 'x-should-retry': 'false' });
      response.end('{"error":{"message":"not a bench request"}}');
      return;
    }
    response.writeHead(200, STREAM_HEADERS);
    response.end(answered.stream);
    record(answered.tag, Number(process.hrtime.bigint() - arrived), body.length);
  });
}

const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, serve);
server.on('connection', () => connections++);
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
