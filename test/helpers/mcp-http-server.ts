import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

interface Tap {
  teardown(fn: () => unknown): void;
}

export interface LoopbackMcpServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The headers of every request, in order. */
  readonly requests: Array<{ method: string; headers: IncomingHttpHeaders }>;
  /** Sessions the client ended with DELETE. */
  readonly ended: string[];
  /** Answers every later request with this status instead, until set back to null. */
  failWith: number | null;
  /** Closes every connection at once, as a server that goes away does. */
  drop(): void;
}

function serverWithTools(): McpServer {
  const server = new McpServer({ name: 'loopback', version: '1.0.0' });
  server.registerTool(
    'get-echo',
    { description: 'Echoes its text back.', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool('slow', { description: 'Never answers.' }, () => new Promise<never>(() => {}));
  return server;
}

/**
 * A Streamable HTTP MCP server on loopback, made with the SDK, in the test's own process: stateful, one
 * session per `initialize`, offering `get-echo {text}` and `slow`.
 */
export async function loopbackMcpServer(t: Tap): Promise<LoopbackMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state: LoopbackMcpServer = {
    url: '',
    requests: [],
    ended: [],
    failWith: null,
    drop: () => http.closeAllConnections(),
  };
  const http: Server = createServer((req, res) => {
    state.requests.push({ method: req.method ?? '', headers: req.headers });
    if (state.failWith !== null) {
      res.writeHead(state.failWith).end();
      return;
    }
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (req.method === 'DELETE' && typeof id === 'string') state.ended.push(id);
    void (async () => {
      let transport = known;
      if (transport === undefined) {
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (session) => {
            sessions.set(session, fresh);
          },
        });
        await serverWithTools().connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res);
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  t.teardown(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await Promise.all([...sessions.values()].map((transport) => transport.close()));
  });
  return state;
}
