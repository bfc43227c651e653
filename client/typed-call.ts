import { newId } from '../core/ids.js';
import { type Envelope, type ResponseFrame, WireCallError, type WireClient } from './wire-client.js';

/** How long the library waits for any one answer before giving up on it. */
export const ANSWER_TIMEOUT_MS = 60_000;

/** A fresh operation id for a mutation. */
export function operationId(): string {
  return newId('op');
}

/** Sends a request and waits for its answer, whatever it says. */
export function answer(
  client: WireClient,
  method: string,
  payload: object,
  envelope: Envelope = {},
): Promise<ResponseFrame> {
  return client.response(
    client.send(method, payload as Record<string, unknown>, envelope),
    ANSWER_TIMEOUT_MS,
  );
}

/** The result of a request, typed by its caller; a refusal throws WireCallError with its code and message. */
export async function typedCall<T>(
  client: WireClient,
  method: string,
  payload: object,
  envelope: Envelope = {},
): Promise<T> {
  const frame = await answer(client, method, payload, envelope);
  if (!frame.ok) throw WireCallError.of(method, frame);
  return frame.result as T;
}
