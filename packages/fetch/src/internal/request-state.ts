/**
 * What `apiKey()` learns about a request and later steps need: the `RateLimit` headers an
 * authenticated request carries on every response, errors included, and which response
 * `sendPage()` already built with them. Kept in symbol-keyed properties of the `Request`
 * rather than in a WeakMap keyed by it: a WeakMap entry per request is an ephemeron the
 * garbage collector must trace on every scavenge (see the Hono adapter's guard-headers.ts).
 * @module
 */

const HEADERS = Symbol('keyset.rateLimitHeaders');
const CARRIER = Symbol('keyset.rateLimitHeadersCarrier');

interface Slots {
  [HEADERS]?: Readonly<Record<string, string>>;
  [CARRIER]?: Response;
}

const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** Records the headers `apiKey()` must add to every response to `request`. */
export function rememberHeaders(request: Request, headers: Readonly<Record<string, string>>): void {
  (request as Slots)[HEADERS] = headers;
}

/** The headers recorded for `request`, if any. */
export function rememberedHeaders(request: Request | undefined): Readonly<Record<string, string>> {
  return (request === undefined ? undefined : (request as Slots)[HEADERS]) ?? NONE;
}

/** Records that `response` carries the headers recorded for `request` (`sendPage()` built it with them). */
export function carriedBy(request: Request, response: Response): void {
  (request as Slots)[CARRIER] = response;
}

/** Whether `response` is the one `sendPage()` built for `request` with its recorded headers. */
export function carries(request: Request, response: Response): boolean {
  return (request as Slots)[CARRIER] === response;
}

/**
 * `response` with `headers` added where it has none of that name. A `Response` from
 * `fetch()` has immutable headers: it is copied (same body stream, status and headers).
 */
export function withHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  const missing = Object.entries(headers).filter(([name]) => !response.headers.has(name));
  if (missing.length === 0) return response;
  let target = response;
  try {
    for (const [name, value] of missing) target.headers.set(name, value);
  } catch {
    target = new Response(response.body, response);
    for (const [name, value] of missing) target.headers.set(name, value);
  }
  return target;
}
