/**
 * What `apiKey()` learns about a request and the problem handler needs later: the
 * `RateLimit` headers an authenticated request carries on every response, errors
 * included. Kept beside the `Request` object, never on it.
 * @module
 */

const rateLimitHeaders = new WeakMap<Request, Readonly<Record<string, string>>>();

/** Records the headers `apiKey()` must add to every response to `request`. */
export function rememberHeaders(request: Request, headers: Readonly<Record<string, string>>): void {
  rateLimitHeaders.set(request, headers);
}

/** The headers recorded for `request`, if any. */
export function rememberedHeaders(request: Request | undefined): Readonly<Record<string, string>> {
  return (request === undefined ? undefined : rateLimitHeaders.get(request)) ?? {};
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
