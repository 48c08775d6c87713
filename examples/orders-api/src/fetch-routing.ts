/**
 * What a `(Request) => Response` server does itself that a framework would do for it: match
 * a path to a route's pattern, read a JSON body up to a limit (and answer that limit's 413),
 * and write a JSON answer.
 * `server-fetch.ts` uses these; Hono, Express and Fastify have their own.
 * @module
 */
import { KeysetError } from '@keyset/core';
import { problemResponse } from '@keyset/fetch';
import type { AppResponse } from './app/app-types.ts';
import { assertJsonBodyHeaders, MAX_BODY_BYTES, parseJsonObject } from './app/validation.ts';

/** Path parameters of the matched route (`:id`), decoded. */
export type Params = Readonly<Record<string, string>>;

/**
 * The params of `pathname` under a route's `pattern`, or `undefined`. Paths match exactly
 * (`/api/orders/` is not `/api/orders`, as on Hono); a `:name` segment takes one non-empty
 * segment, percent-decoded (kept as sent when the encoding is malformed, as Hono does).
 *
 * @example
 * ```ts
 * matchPath('/api/keys/:id', '/api/keys/key_1'); // { id: 'key_1' }
 * ```
 */
export function matchPath(pattern: string, pathname: string): Params | undefined {
  const segments = pattern.split('/');
  const parts = pathname.split('/');
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const part = parts[i]!;
    if (segment.startsWith(':')) {
      if (part === '') return undefined;
      params[segment.slice(1)] = decode(part);
    } else if (segment !== part) return undefined;
  }
  return params;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The JSON object sent, or `undefined` past `MAX_BODY_BYTES`. The headers are checked
 * before the body is read: a coded body is never decoded as text.
 */
export async function readJsonBody(request: Request): Promise<Record<string, unknown> | undefined> {
  const [type, coding] = [request.headers.get('content-type'), request.headers.get('content-encoding')];
  assertJsonBodyHeaders(type, coding);
  const text = await readText(request);
  return text === undefined ? undefined : parseJsonObject(text, type, coding);
}

/** The body as UTF-8 text, or `undefined` past `MAX_BODY_BYTES` (read no further than that). */
async function readText(request: Request): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) return undefined;
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * The error and the answer for a body past the limit: the limit is the server's, like Hono's
 * `bodyLimit()`, so 413 (RFC 9110 §15.5.14). `platform` lets the problem say
 * `Connection: close`, as the rest of the body is never read.
 */
export async function tooLarge(request: Request, platform: unknown): Promise<{ error: KeysetError; response: Response }> {
  const error = new KeysetError('invalid_request', { detail: `The body is larger than ${MAX_BODY_BYTES} bytes` });
  const problem = problemResponse(error, { request, platform });
  const body = (await problem.json()) as Record<string, unknown>;
  return { error, response: new Response(JSON.stringify({ ...body, status: 413 }), { status: 413, headers: problem.headers }) };
}

/** An app-layer answer as a `Response`: JSON, or no body. */
export function jsonResponse(response: AppResponse): Response {
  const headers = new Headers(response.headers);
  if (response.body === undefined) return new Response(null, { status: response.status, headers });
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(response.body), { status: response.status, headers });
}
