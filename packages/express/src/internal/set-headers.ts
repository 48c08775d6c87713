/**
 * Sets the core's response headers (`RateLimit`, `RateLimit-Policy`, `Link`, …) on an
 * Express response.
 * @module
 */
import type { Response } from 'express';

/**
 * What `res.set(headers)` does for these names, without its per-header detour: Express's
 * `res.set` converts each value with `String()` and rewrites only `Content-Type` (adding a
 * charset), which the core never sends here, then calls `res.setHeader`, as this does.
 */
export function setHeaders(res: Response, headers: Readonly<Record<string, string>>): void {
  for (const name in headers) res.setHeader(name, headers[name]!);
}
