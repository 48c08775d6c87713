/**
 * The transport half of an adapter whose handlers answer with a Web `Response` (Hono,
 * Fetch): what the guard reads from a `Request`, and how an admitted request's response
 * gets the guard's headers and gives its in-flight lease back.
 * @module
 */
import { NO_LEASE } from '../concurrency/concurrency-limit.ts';
import type { ApiKeyGuardRequest, ApiKeyGuardResult } from '../auth/api-key-guard.ts';
import { declaresBody } from './message-body.ts';

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
    // is a string into a stream, which the server then writes chunk by chunk, far slower
    // than the string written at once (`bench inprocess-ab`).
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
 * Whether `request`'s body may still be on its way, or was left part-read: then an early
 * answer (a refusal before the body is read, a body over a limit) should close the
 * connection (`Connection: close`, RFC 9112 §9.6), since a client that was waiting for
 * `100 Continue` never sends it and the next request on the connection would be read as
 * that body. HTTP/1.1 frames every request body with `Transfer-Encoding` or
 * `Content-Length` (RFC 9112 §6.3): a request with neither (or a length of 0) has none
 * pending, whatever else is asked (`@hono/node-server` gives an `OPTIONS` or a `DELETE`
 * an empty body stream). `incoming` is Node's `IncomingMessage` when the server gives it:
 * then the body is pending while not every byte arrived (`complete`, which stays `false`
 * until the parser's `request` listeners return), or when a reader took part of it and
 * stopped (`readableEnded` still `false`): `@hono/node-server` drains what nobody read for
 * 500 ms, but a stream a reader left holds the rest back, and the socket is dropped after
 * a response that kept it. Elsewhere, a body nobody read is pending.
 *
 * @example
 * ```ts
 * if (webBodyPending(request, platform?.incoming)) headers.connection = 'close';
 * ```
 */
export function webBodyPending(request: Request, incoming?: NodeIncomingBody | null): boolean {
  const headers = incoming?.headers;
  const framed =
    headers === undefined
      ? declaresBody(request.headers.get('transfer-encoding'), request.headers.get('content-length'))
      : declaresBody(headers['transfer-encoding'], headers['content-length']);
  if (!framed) return false;
  if (typeof incoming?.complete === 'boolean') return !incoming.complete || (incoming.readableEnded === false && request.bodyUsed);
  return request.body !== null && !request.bodyUsed;
}

/** What `webBodyPending()` reads of Node's `IncomingMessage`, structurally. */
export interface NodeIncomingBody {
  /** Every byte of the body arrived. */
  readonly complete?: unknown;
  /** The body was read to its end. */
  readonly readableEnded?: unknown;
  readonly headers?: Readonly<Record<string, unknown>>;
}
