import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { raw, type ScriptedResponse } from './provider-streams.js';

/**
 * The streams `npm run record:providers` recorded from llama.cpp's own `llama-server`, one file per API and
 * case (test/fixtures/provider-recordings/), replayed byte for byte.
 */
export type RecordedApi = 'chat_completions' | 'responses' | 'messages';
export type RecordedCase = 'text' | 'tool-call' | 'tool-result' | 'error';

export interface Recording {
  api: RecordedApi;
  case: RecordedCase;
  server: string;
  model: string;
  request: { path: string; headers: Record<string, string>; body: Record<string, unknown> };
  response: { status: number; content_type: string | null; body: string };
}

const FOLDER = join(import.meta.dirname, '..', 'fixtures', 'provider-recordings');

export function recording(api: RecordedApi, name: RecordedCase): Recording {
  return JSON.parse(readFileSync(join(FOLDER, `${api}.${name}.json`), 'utf8')) as Recording;
}

/** A recording as the scripted provider plays it: its status, content type and body bytes. */
export function recorded(api: RecordedApi, name: RecordedCase): ScriptedResponse {
  const { response } = recording(api, name);
  return {
    status: response.status,
    headers: { 'content-type': response.content_type ?? 'application/octet-stream' },
    steps: [raw(response.body)],
  };
}

/** What the recorded model answers, whatever it is asked. */
export const RECORDED_ANSWER = 'Hello! This is a tiny llama.cpp test model.';
