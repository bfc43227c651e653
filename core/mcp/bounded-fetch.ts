import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * `fetch` whose successful response bodies are bounded: a JSON body at `limit` bytes, an event stream at
 * `limit` bytes per event (a stream carries many messages over its life). A body past its bound fails to
 * read, so the message it carried is dropped, as a child's over-long line is.
 */
export function boundedFetch(limit: number): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.ok || response.body === null) return response;
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    return new Response(response.body.pipeThrough(eventStream ? eventBound(limit) : totalBound(limit)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function totalBound(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let bytes = 0;
  return new TransformStream({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      if (bytes > limit) controller.error(new RangeError('the response is over the message bound'));
      else controller.enqueue(chunk);
    },
  });
}

/** Counts the bytes of each event: an event ends at a blank line (LF, CR or CRLF line ends). */
function eventBound(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let eventBytes = 0;
  let atLineStart = true;
  let afterCr = false;
  return new TransformStream({
    transform(chunk, controller) {
      for (const byte of chunk) {
        if (byte === LF && afterCr) {
          afterCr = false;
          continue;
        }
        afterCr = byte === CR;
        if (byte === LF || byte === CR) {
          if (atLineStart) eventBytes = 0;
          atLineStart = true;
          continue;
        }
        atLineStart = false;
        if (++eventBytes > limit) {
          controller.error(new RangeError('an event is over the message bound'));
          return;
        }
      }
      controller.enqueue(chunk);
    },
  });
}
