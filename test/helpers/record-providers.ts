/**
 * `npm run record:providers -- --model <file.gguf>`: records real streams of the three provider APIs
 * (Chat Completions, Responses, Messages) from llama.cpp's own `llama-server`, which the suite replays
 * (test/fixtures/provider-recordings/). The server is built once, offline, from the llama.cpp source the npm
 * package node-llama-cpp ships (about 25 minutes on 2 cores), into `--build-dir` (default
 * ~/.cache/magi-llama-server). Each API is asked, with the daemon's own request bodies: a text answer, a
 * forced tool call, the continuation after that call's result, and a request the server refuses (a
 * prompt past its context). See docs/configuration.md, "Recorded provider streams".
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type {
  ConversationMessage,
  FunctionTool,
  ProviderRequest,
} from '../../core/provider/chat-provider.js';
import { chatRequestBody } from '../../core/provider/chat-request.js';
import { messagesRequestBody } from '../../core/provider/messages/messages-request.js';
import { responsesRequestBody } from '../../core/provider/responses/responses-request.js';

const LLAMA_PACKAGE = 'node-llama-cpp@3.20.0';
/** A chat template whose tool calls llama-server's grammar can force from the first token. */
const TEMPLATE = 'models/templates/meetkai-functionary-medium-v3.2.jinja';
const CONTEXT_TOKENS = 4096;

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    'build-dir': { type: 'string', default: join(homedir(), '.cache', 'magi-llama-server') },
    out: { type: 'string', default: resolve('test', 'fixtures', 'provider-recordings') },
  },
});
if (values.model === undefined) {
  process.stderr.write(
    'usage: npm run record:providers -- --model <file.gguf> [--build-dir DIR] [--out DIR]\n',
  );
  process.exit(2);
}
const model = resolve(values.model);
const buildDir = resolve(values['build-dir']);
const source = join(buildDir, 'src', 'llama.cpp');
const binary = join(source, 'build', 'bin', 'llama-server');

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
}

/** Builds llama-server once: the bundled source, cloned from its git bundle, built with CMake. */
function ensureServer(): void {
  if (existsSync(binary)) return;
  const work = join(buildDir, 'src');
  mkdirSync(work, { recursive: true });
  if (!existsSync(source)) {
    run('npm', ['pack', '-q', LLAMA_PACKAGE], work);
    const archive = readdirSync(work).find(
      (name) => name.startsWith('node-llama-cpp-') && name.endsWith('.tgz'),
    );
    if (archive === undefined) throw new Error('npm pack gave no archive');
    run('tar', ['xzf', archive, 'package/llama/gitRelease.bundle'], work);
    run('git', ['clone', '-q', 'package/llama/gitRelease.bundle', 'llama.cpp'], work);
  }
  run(
    'cmake',
    [
      '-B',
      'build',
      '-DGGML_NATIVE=OFF',
      '-DLLAMA_CURL=OFF',
      '-DLLAMA_OPENSSL=OFF',
      '-DLLAMA_BUILD_TESTS=OFF',
      '-DLLAMA_BUILD_EXAMPLES=OFF',
      '-DLLAMA_BUILD_SERVER=ON',
    ],
    source,
  );
  run('nice', ['-n', '19', 'cmake', '--build', 'build', '--target', 'llama-server', '-j', '2'], source);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

const WEATHER: FunctionTool = {
  name: 'get_weather',
  description: 'The weather in a place.',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', maxLength: 8 } },
    required: ['location'],
  },
};

function neutral(
  messages: ConversationMessage[],
  tools: FunctionTool[],
  system: string | null,
): ProviderRequest {
  return {
    selection: { model: 'tiny', reasoningEffort: null, fast: false },
    system,
    messages,
    tools,
    signal: new AbortController().signal,
  };
}

const ASK: ConversationMessage[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
const CALLED: ConversationMessage[] = [
  ...ASK,
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'call_recorded_1', name: 'get_weather', arguments: '{"location":"Paris"}' }],
  },
  { role: 'tool', toolCallId: 'call_recorded_1', content: '{"sky":"clear","celsius":21}' },
];
const TOO_LONG: ConversationMessage[] = [{ role: 'user', content: 'word '.repeat(CONTEXT_TOKENS * 2) }];

interface Api {
  name: 'chat_completions' | 'responses' | 'messages';
  path: string;
  headers: Record<string, string>;
  body(request: ProviderRequest): Record<string, unknown>;
  /** How this API forces a call, for the recording only: the daemon never sends it. */
  force: unknown;
}

const APIS: Api[] = [
  {
    name: 'chat_completions',
    path: '/v1/chat/completions',
    headers: {},
    body: (request) => chatRequestBody(request, { streamUsage: true, assistantToolCallContent: 'empty' }),
    force: 'required',
  },
  {
    name: 'responses',
    path: '/v1/responses',
    headers: {},
    body: (request) => responsesRequestBody(request, { reasoningSummary: false }),
    force: 'required',
  },
  {
    name: 'messages',
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: (request) =>
      messagesRequestBody(request, {
        maxTokens: 256,
        modelMaxTokens: {},
        version: '2023-06-01',
        auth: 'x-api-key',
      }),
    force: { type: 'any' },
  },
];

/** The forced call needs the functionary template; the model's own template answers in text. */
const CASES = [
  { name: 'text', request: neutral(ASK, [], 'Answer briefly.'), force: false },
  { name: 'tool-call', request: neutral(ASK, [WEATHER], null), force: true },
  { name: 'tool-result', request: neutral(CALLED, [WEATHER], null), force: false },
  { name: 'error', request: neutral(TOO_LONG, [], null), force: false },
] as const;

interface Server {
  base: string;
  stop(): void;
}

/** Starts llama-server with the model, and `template` when given (else the model's own). */
async function startServer(template: string | null): Promise<Server> {
  const port = await freePort();
  const args = [
    '-m',
    model,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '-c',
    String(CONTEXT_TOKENS),
    '--jinja',
  ];
  if (template !== null) args.push('--chat-template-file', join(source, template));
  const child = spawn(binary, args, { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    const health = await fetch(`${base}/health`).catch(() => null);
    if (health?.ok) break;
    if (tries > 200) {
      child.kill();
      throw new Error('llama-server did not start');
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return { base, stop: () => child.kill() };
}

async function main(): Promise<void> {
  ensureServer();
  const own = await startServer(null);
  const functionary = await startServer(TEMPLATE).catch((error) => {
    own.stop();
    throw error;
  });
  try {
    const version = spawnSync(binary, ['--version'], { encoding: 'utf8' });
    mkdirSync(values.out, { recursive: true });
    for (const api of APIS) {
      for (const recorded of CASES) {
        const body = {
          ...api.body(recorded.request),
          ...(recorded.force ? { tool_choice: api.force } : {}),
        };
        const base = recorded.force ? functionary.base : own.base;
        const response = await fetch(`${base}${api.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...api.headers },
          body: JSON.stringify(body),
        });
        const text = await response.text();
        const file = join(values.out, `${api.name}.${recorded.name}.json`);
        const recording = {
          api: api.name,
          case: recorded.name,
          server: `llama.cpp llama-server (${(version.stderr || version.stdout).trim().split('\n')[0]}), ${LLAMA_PACKAGE}`,
          model: `${basename(model)} (${statSync(model).size} bytes)`,
          template: recorded.force ? TEMPLATE : "the model's own",
          request: { path: api.path, headers: api.headers, body },
          response: {
            status: response.status,
            content_type: response.headers.get('content-type'),
            body: text,
          },
        };
        writeFileSync(file, `${JSON.stringify(recording, null, 2)}\n`);
        process.stdout.write(`${file}: ${response.status}, ${Buffer.byteLength(text)} bytes\n`);
      }
    }
  } finally {
    own.stop();
    functionary.stop();
  }
}

await main();
