/**
 * The absolute URL a client used, for `Link` headers. Either the request's own URL or,
 * behind a proxy, the configured public base URL plus the request's path and query.
 * @module
 */

/** `requestUrl` as the client saw it: unchanged, or re-based onto `base`. */
export function publicUrl(requestUrl: string, base: string | undefined): string {
  if (base === undefined) return requestUrl;
  const { pathname, search } = new URL(requestUrl);
  return `${base}${pathname}${search}`;
}

/** The path of an absolute URL, without query or fragment: the problem `instance`. */
export function pathOf(requestUrl: string): string {
  return new URL(requestUrl).pathname;
}
