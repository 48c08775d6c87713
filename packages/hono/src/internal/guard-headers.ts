/**
 * The guard's response headers (`RateLimit…`) for a request, from `apiKey()` until a
 * response carries them. `sendPage()` takes them into the one plain header record of its
 * response; for any other response `apiKey()` adds them once the handler has answered.
 * Kept here rather than set with `c.header()` before the handler runs: that would give
 * every response an undici `Headers` object to build, fill and read back.
 *
 * Per-request state lives in symbol-keyed properties of the context, not in WeakMaps
 * keyed by it: a WeakMap entry per request is an ephemeron the garbage collector must
 * trace on every scavenge, which measurably slowed the whole request path.
 * @module
 */
import type { Context } from 'hono';

const HELD = Symbol('keyset.guardHeaders');
const CARRIER = Symbol('keyset.guardHeadersCarrier');

interface Slots {
  [HELD]?: Readonly<Record<string, string>> | undefined;
  [CARRIER]?: Response | undefined;
}

const slots = (c: Context): Slots => c as unknown as Slots;

/** Holds `headers` for the response to `c`. */
export function holdGuardHeaders(c: Context, headers: Readonly<Record<string, string>>): void {
  slots(c)[HELD] = headers;
}

/** The headers held for `c` (or `undefined`), still held. */
export function peekGuardHeaders(c: Context): Readonly<Record<string, string>> | undefined {
  return slots(c)[HELD];
}

/** Records that `response` carries the held headers, so `apiKey()` need not check it. */
export function carriedBy(c: Context, response: Response): void {
  slots(c)[CARRIER] = response;
}

/**
 * The headers held for `c` that its final response may still lack: `undefined` when there
 * are none, or when that response is the one `sendPage()` built with them.
 */
export function takeGuardHeaders(c: Context): Readonly<Record<string, string>> | undefined {
  const s = slots(c);
  const headers = s[HELD];
  if (headers === undefined) return undefined;
  s[HELD] = undefined;
  const carrier = s[CARRIER];
  return carrier !== undefined && carrier === c.res ? undefined : headers;
}
