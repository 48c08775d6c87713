/**
 * For adapters whose handlers answer with a Web `Response` (Hono, Fetch): the request's
 * work ends when its body has been sent, not when the handler returns, so a streamed
 * response keeps its in-flight lease until the stream ends, fails or is cancelled (the
 * client went away).
 * @module
 */
import { NO_LEASE, type ReleaseLease } from './concurrency-limit.ts';

/**
 * `response` with `release` called once its body is done: at once when it has none,
 * else a copy (same status and headers) whose body stream calls it when read to the end,
 * on a read error, or when cancelled. Without a lease (none, or `NO_LEASE`) the response is returned as is.
 *
 * @example
 * ```ts
 * const response = await handler(request);
 * return releaseWithBody(response, checked.release);
 * ```
 */
export function releaseWithBody(response: Response, release: ReleaseLease | undefined): Response {
  if (release === undefined || release === NO_LEASE) return response;
  const body = response.body;
  if (body === null || response.bodyUsed) {
    release();
    return response;
  }
  const reader = body.getReader();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(stream, response);
}
