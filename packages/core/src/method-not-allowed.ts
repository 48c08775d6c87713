/**
 * The 405 policy every adapter applies when no route matched: if the path is known under
 * other methods, the answer is `405 method_not_allowed` with an `Allow` header listing
 * them (RFC 9110 §15.5.6 makes `Allow` mandatory on a 405), not a 404 that would tell the
 * client the resource does not exist. Adapters only find which methods their router has
 * for the path; the list and the problem are decided here.
 * @module
 */
import { KeysetError } from './errors.ts';

/** Display order of the common methods in `Allow`; any other method follows, sorted. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** An HTTP method token (RFC 9110 §9.1: a `token`), which is what may appear in `Allow`. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The error for a request whose path exists under `allowed` methods but not under
 * `method`, or `undefined` when nothing is allowed there (a plain 404) or `method` is
 * allowed after all. Methods are case-sensitive tokens (RFC 9110 §9.1); routers that
 * store them lower-case (Express) are upper-cased. A path with `GET` also allows `HEAD`
 * (RFC 9110 §9.3.2), which every framework answers from the GET route.
 *
 * @example
 * ```ts
 * const error = methodNotAllowed('POST', ['GET']);
 * // error.status === 405, error.headers.allow === 'GET, HEAD',
 * // error.extensions.allowed_methods → ['GET', 'HEAD']
 * ```
 */
export function methodNotAllowed(method: string, allowed: Iterable<string>): KeysetError | undefined {
  const methods = new Set<string>();
  for (const raw of allowed) {
    const name = raw.toUpperCase();
    if (TOKEN.test(name) && name !== 'ALL') methods.add(name);
  }
  if (methods.has('GET')) methods.add('HEAD');
  if (methods.size === 0 || methods.has(method.toUpperCase())) return undefined;
  const rank = (name: string): number => {
    const index = ORDER.indexOf(name);
    return index === -1 ? ORDER.length : index;
  };
  const list = [...methods].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return new KeysetError('method_not_allowed', {
    // The request's method is not echoed: it is client text, and could be anything.
    detail: `This path supports only ${list.join(', ')}.`,
    extensions: { allowed_methods: list },
    headers: { allow: list.join(', ') },
  });
}

/** A route as a router lists it: a method and a path pattern. */
export interface RouteEntry {
  readonly method: string;
  readonly path: string;
}

/**
 * The methods of the routes in `routes` whose pattern matches `pathname`, for
 * `methodNotAllowed()`: what an adapter's 405 needs from a route table the framework
 * documents (Hono's `inspectRoutes`) or the application lists (Express). Patterns are
 * compared segment by segment: `:name` (with any `{…}` or `?` after it) matches one
 * non-empty segment, a segment starting with `*` matches the rest, any other matches
 * itself exactly. Optional groups (`{/:x}`) are not read: list each form.
 *
 * @example
 * ```ts
 * routeMethods([{ method: 'GET', path: '/orders/:id' }, { method: 'DELETE', path: '/orders/:id' }], '/orders/7'); // ['GET', 'DELETE']
 * ```
 */
export function routeMethods(routes: Iterable<RouteEntry>, pathname: string): string[] {
  const parts = pathname.split('/');
  const methods: string[] = [];
  for (const { method, path } of routes) if (matches(path.split('/'), parts)) methods.push(method);
  return methods;
}

function matches(pattern: readonly string[], parts: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i] as string;
    if (want.startsWith('*')) return true;
    const part = parts[i];
    if (part === undefined) return false;
    if (want.startsWith(':') ? part === '' : want !== part) return false;
  }
  return pattern.length === parts.length;
}
