/**
 * The transport half of an adapter whose handlers answer with a Web `Response` (Hono,
 * Fetch): what the guard reads from a `Request`, and how an admitted request's response
 * gets the guard's headers and gives its in-flight lease back.
 * @module
 */
import { NO_LEASE } from '../concurrency/concurrency-limit.ts';
import type { ApiKeyGuardRequest, ApiKeyGuardResult } from '../keys/api-key-guard.ts';

/**
 * What the guard reads from `request`: every credential header, the URL (keys in the query
 * are refused), the socket's peer as the adapter knows it, and the raw `X-Forwarded-For`,
 * which the guard reads only under its `trustProxy` option.
 *
 * @example
 * ```ts
 * const checked = await guard.check(webGuardRequest(request, server.requestIP(request)?.address), checkOptions);
 * ```
 */
export function webGuardRequest(request: Request, remoteAddress: string | null | undefined): ApiKeyGuardRequest {
  const { headers } = request;
  return {
    authorization: headers.get('authorization'),
    xApiKey: headers.get('x-api-key'),
    url: request.url,
    remoteAddress,
    forwardedFor: headers.get('x-forwarded-for'),
  };
}

/**
 * The response of an admitted request as it leaves the adapter: with the guard's headers
 * it lacks (an inner `apiKey()` layer's stay), and with the in-flight lease released when
 * the response ends. A body streams under the lease and releases it when read to the end,
 * on a read error, or when cancelled (the client went away). A response that sends no
 * body releases it at once: no body, a body already used, and any answer to `HEAD`
 * (RFC 9110 §9.3.2), whose body servers and frameworks drop unread (Hono answers `HEAD`
 * with the `GET` route's response, its body replaced by none).
 *
 * @example
 * ```ts
 * const checked = await guard.check(webGuardRequest(request, undefined), checkOptions);
 * return finishWebResponse(request.method, await handler(request), checked);
 * ```
 */
export function finishWebResponse(method: string, response: Response, { headers, release }: Pick<ApiKeyGuardResult, 'headers' | 'release'>): Response {
  const lease = release === NO_LEASE ? undefined : release;
  let out = response;
  if (lease !== undefined) {
    // `body` is read only here: on @hono/node-server, reading it turns a response whose body
    // is a string into a stream, which the server then writes chunk by chunk (about 30 µs a
    // request in `bench inprocess-ab`).
    const body = response.body;
    if (method !== 'HEAD' && body !== null && !response.bodyUsed) out = new Response(releasingBody(body, lease), response);
    else lease();
  }
  for (const name in headers) {
    if (out.headers.has(name)) continue;
    const value = headers[name] as string;
    try {
      out.headers.set(name, value);
    } catch {
      // Immutable headers (a `Response` from `fetch()`): the same response with headers of its own.
      out = new Response(out.body, out);
      out.headers.set(name, value);
    }
  }
  return out;
}

/** `body` as a stream that calls `release` once it has ended, failed or been cancelled. */
function releasingBody(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
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
}

/**
 * Whether `request`'s body may still be on its way, unread: then an early answer (a
 * refusal before the body is read, a body over a limit) should close the connection
 * (`Connection: close`, RFC 9112 §9.6), since a client that was waiting for
 * `100 Continue` never sends it and the next request on the connection would be read as
 * that body. `incoming` is Node's `IncomingMessage` when the server gives it (its
 * `complete`: every byte of the body arrived); elsewhere, a body nobody read is pending.
 *
 * @example
 * ```ts
 * if (webBodyPending(request, platform?.incoming)) headers.connection = 'close';
 * ```
 */
export function webBodyPending(request: Request, incoming?: { readonly complete?: unknown } | null): boolean {
  if (typeof incoming?.complete === 'boolean') return !incoming.complete;
  return request.body !== null && !request.bodyUsed;
}
