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
const CARRIED = Symbol('keyset.guardHeadersCarried');

interface Slots {
  [HELD]?: Readonly<Record<string, string>> | undefined;
  [CARRIER]?: Response | undefined;
  [CARRIED]?: Readonly<Record<string, string>> | undefined;
}

const slots = (c: Context): Slots => c as unknown as Slots;

/**
 * Holds `headers` for the response to `c`. Behind several `apiKey()` layers the innermost
 * one's are held (it runs last), and each layer adds its own after the handler (below).
 */
export function holdGuardHeaders(c: Context, headers: Readonly<Record<string, string>>): void {
  slots(c)[HELD] = headers;
}

/** The headers held for `c` (or `undefined`). */
export function peekGuardHeaders(c: Context): Readonly<Record<string, string>> | undefined {
  return slots(c)[HELD];
}

/** Records that `response` was built with the held `headers`, so the layer that holds them need not check it. */
export function carriedBy(c: Context, response: Response, headers: Readonly<Record<string, string>> | undefined): void {
  const s = slots(c);
  s[CARRIER] = response;
  s[CARRIED] = headers;
}

/**
 * Whether the final response to `c` still needs a look for `headers` (one `apiKey()`
 * layer's): `false` only when it is the response `sendPage()` built with exactly them.
 */
export function lacksGuardHeaders(c: Context, headers: Readonly<Record<string, string>>): boolean {
  const s = slots(c);
  return !(s[CARRIED] === headers && s[CARRIER] !== undefined && s[CARRIER] === c.res);
}
