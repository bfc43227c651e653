import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ScriptedResponse } from './provider-streams.js';

/**
 * The official SDKs (`openai`, `@anthropic-ai/sdk`) reading a scripted or recorded stream, as an oracle:
 * a stream they parse is well formed for its API, and what they make of it is what the daemon must make
 * of it too. Their fetch is replaced by one that answers the stream's bytes; nothing leaves the process.
 */

function bodyOf(response: ScriptedResponse): Buffer {
  return Buffer.concat(response.steps.flatMap((step) => (step.kind === 'write' ? [step.bytes] : [])));
}

function answering(response: ScriptedResponse): typeof fetch {
  return async () => new Response(bodyOf(response), { status: response.status, headers: response.headers });
}

const COMMON = { apiKey: 'sk-oracle', baseURL: 'http://oracle.invalid/v1', maxRetries: 0 } as const;

export interface OracleCall {
  id: string;
  name: string;
  arguments: string;
}

/** The Responses stream through the SDK's own accumulating helper (it checks every index). */
export async function openAiResponse(response: ScriptedResponse) {
  const client = new OpenAI({ ...COMMON, fetch: answering(response) });
  const stream = client.responses.stream({ model: 'oracle', input: 'oracle' });
  for await (const _event of stream);
  return stream.finalResponse();
}

/** The Responses stream's events as the SDK parses them, without accumulation (for servers that omit indexes). */
export async function openAiResponseEvents(response: ScriptedResponse) {
  const client = new OpenAI({ ...COMMON, fetch: answering(response) });
  const events = [];
  for await (const event of await client.responses.create({
    model: 'oracle',
    input: 'oracle',
    stream: true,
  })) {
    events.push(event);
  }
  return events;
}

/** A Chat Completions stream through the SDK's accumulating helper. */
export async function openAiChatCompletion(response: ScriptedResponse) {
  const client = new OpenAI({ ...COMMON, fetch: answering(response) });
  const stream = client.chat.completions.stream({
    model: 'oracle',
    messages: [{ role: 'user', content: 'oracle' }],
  });
  return stream.finalChatCompletion();
}

/** A Messages stream through the SDK's accumulating helper. */
export async function anthropicMessage(response: ScriptedResponse) {
  const client = new Anthropic({ ...COMMON, fetch: answering(response) });
  const stream = client.messages.stream({
    model: 'oracle',
    max_tokens: 1_024,
    messages: [{ role: 'user', content: 'oracle' }],
  });
  return stream.finalMessage();
}

/** Whether the SDK refuses the HTTP answer as an error (it throws `APIError` with the status). */
export async function anthropicStatus(response: ScriptedResponse): Promise<number | null> {
  try {
    await anthropicMessage(response);
    return null;
  } catch (error) {
    return error instanceof Anthropic.APIError ? (error.status ?? null) : null;
  }
}
