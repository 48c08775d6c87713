/**
 * Whether a request's framing announces a body (RFC 9112 §6.3): a `Transfer-Encoding`, or a
 * `Content-Length` other than 0. A request with neither has no body at all, so nothing of it
 * can still be on its way.
 * @module
 */

/**
 * `true` when `transferEncoding` is present or `contentLength` is present and not 0 (each
 * as Node's `headers` or `Headers.get()` gives it).
 *
 * @example
 * ```ts
 * declaresBody(req.headers['transfer-encoding'], req.headers['content-length']); // false for a plain GET
 * ```
 */
export function declaresBody(transferEncoding: unknown, contentLength: unknown): boolean {
  if (transferEncoding !== undefined && transferEncoding !== null) return true;
  if (contentLength === undefined || contentLength === null) return false;
  return !/^\s*0+\s*$/.test(String(contentLength));
}
