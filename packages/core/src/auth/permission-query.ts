/**
 * Permission queries: what a route requires, as `and`/`or` over permissions (scopes). A
 * permission is a scope token; `{ and: [...] }` needs every part, `{ or: [...] }` any one.
 * A route's `scopes` array is the `and` shorthand.
 *
 * What a refusal names as missing (`missing_scopes`) is a set that, once granted, satisfies
 * the query: for `and`, what each part misses; for `or`, what its cheapest part misses (the
 * part missing the fewest permissions, the first of those on a tie). So a client reads one
 * concrete way to be let in, never a formula.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { isValidScope, missingScopes } from '../keys/scopes.ts';

/**
 * What a route requires: one permission, every part (`and`), or any one part (`or`).
 *
 * @example
 * ```ts
 * const query: PermissionQuery = { or: ['orders:read', { and: ['orders:admin', 'reports:read'] }] };
 * ```
 */
export type PermissionQuery = string | { readonly and: readonly PermissionQuery[] } | { readonly or: readonly PermissionQuery[] };

/** Parts a query may hold in all, and how deep it may nest: routes are written by hand. */
const MAX_NODES = 256;
const MAX_DEPTH = 8;

/**
 * Checks `query` (a route's `permissions`) and returns a frozen copy. Throws `ConfigError`
 * saying what to change: each node is a scope token, `{ and: [...] }` or `{ or: [...] }`
 * with at least one part, at most 8 deep and 256 parts in all.
 *
 * @example
 * ```ts
 * const query = permissionQuery({ or: ['orders:read', 'orders:admin'] });
 * ```
 */
export function permissionQuery(query: unknown): PermissionQuery {
  let nodes = 0;
  function copy(node: unknown, depth: number): PermissionQuery {
    if (++nodes > MAX_NODES) throw new ConfigError(`apiKey() permissions may hold at most ${MAX_NODES} parts`);
    if (depth > MAX_DEPTH) throw new ConfigError(`apiKey() permissions may nest at most ${MAX_DEPTH} deep`);
    if (typeof node === 'string') {
      if (!isValidScope(node)) throw new ConfigError(`apiKey() permissions must be scope tokens such as 'orders:read', got ${JSON.stringify(node)}`);
      return node;
    }
    if (typeof node === 'object' && node !== null && !Array.isArray(node)) {
      const keys = Object.keys(node);
      const op = keys[0];
      if (keys.length === 1 && (op === 'and' || op === 'or')) {
        const parts = (node as Record<string, unknown>)[op];
        if (Array.isArray(parts) && parts.length > 0) {
          const copied = Object.freeze(parts.map((part) => copy(part, depth + 1)));
          return Object.freeze(op === 'and' ? { and: copied } : { or: copied });
        }
        throw new ConfigError(`apiKey() permissions: \`${op}\` needs a non-empty array of parts`);
      }
    }
    throw new ConfigError(`apiKey() permissions must be a scope, { and: [...] } or { or: [...] }, got ${describe(node)}`);
  }
  return copy(query, 1);
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The permissions that, granted beside `granted`, would satisfy `query`: empty when it is
 * satisfied already (see the module comment for which set an `or` names).
 *
 * @example
 * ```ts
 * missingPermissions(['reports:read'], { or: ['orders:read', { and: ['orders:admin', 'reports:read'] }] }); // ['orders:read']
 * missingPermissions(['orders:admin'], { and: ['orders:admin', 'reports:read'] }); // ['reports:read']
 * ```
 */
export function missingPermissions(granted: readonly string[], query: PermissionQuery, options: { wildcards?: boolean } = {}): string[] {
  const { wildcards = false } = options;
  function missing(node: PermissionQuery): string[] {
    if (typeof node === 'string') return missingScopes(granted, [node], { wildcards });
    if ('and' in node) {
      const all: string[] = [];
      for (const part of node.and) for (const need of missing(part)) if (!all.includes(need)) all.push(need);
      return all;
    }
    let best: string[] | undefined;
    for (const part of node.or) {
      const need = missing(part);
      if (need.length === 0) return need;
      if (best === undefined || need.length < best.length) best = need;
    }
    return best ?? [];
  }
  return missing(query);
}

/**
 * Whether `granted` satisfies `query`.
 *
 * @example
 * ```ts
 * grantsQuery(['orders:read'], { or: ['orders:read', 'orders:admin'] }); // true
 * ```
 */
export function grantsQuery(granted: readonly string[], query: PermissionQuery, options: { wildcards?: boolean } = {}): boolean {
  return holds(granted, query, options.wildcards === true);
}

/** `grantsQuery`'s walk: no closure or array per call, as the guard runs it on every request of a route. */
function holds(granted: readonly string[], node: PermissionQuery, wildcards: boolean): boolean {
  // A permission held as it is answers without the general check's array (the common case).
  if (typeof node === 'string') return granted.includes(node) || (wildcards && missingScopes(granted, [node], { wildcards }).length === 0);
  if ('and' in node) {
    for (const part of node.and) if (!holds(granted, part, wildcards)) return false;
    return true;
  }
  for (const part of node.or) if (holds(granted, part, wildcards)) return true;
  return false;
}
