/**
 * The absolute URL a client used, for `Link` headers. Either the request's own URL or,
 * behind a proxy, the configured public base URL plus the request's path and query.
 * @module
 */
import { ConfigError } from '@keyset/core';

/**
 * Validates `baseUrl` when a factory runs and returns it without a trailing slash.
 * It may carry a path prefix (a proxy that strips `/v1` → `https://example.com/v1`).
 */
export function normalizeBaseUrl(baseUrl: string | URL | undefined): string | undefined {
  if (baseUrl === undefined) return undefined;
  const text = String(baseUrl);
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    throw new ConfigError(`baseUrl must be an absolute http(s) URL such as 'https://api.example.com', got '${text}'`, { cause });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`baseUrl must be an http(s) URL without query or fragment, got '${text}'`);
  }
  return url.href.replace(/\/+$/, '');
}

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
