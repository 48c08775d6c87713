/**
 * The public base URL of an API behind a proxy, validated once when an adapter's
 * middleware is created. `Link` headers are built on it instead of on the Host the
 * server saw.
 * @module
 */
import { ConfigError } from '../errors.ts';

/**
 * Validates `baseUrl` and returns it without a trailing slash (`undefined` stays
 * `undefined`). It may carry a path prefix: a proxy serving `https://example.com/v1/*`
 * from the app's `/*` → `'https://example.com/v1'`. Throws `ConfigError` for anything
 * that is not an absolute http(s) URL without query or fragment.
 *
 * @example
 * ```ts
 * normalizeBaseUrl('https://api.example.com/v1/'); // 'https://api.example.com/v1'
 * ```
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
