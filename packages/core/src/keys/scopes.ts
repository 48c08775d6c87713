/**
 * Scope checks: least privilege, exact match by default, so a key reaches only what it
 * was granted by name. With
 * `scopeWildcards: true`, a granted `orders:*` covers every scope that starts with
 * `orders:`, and a granted `*` covers all; without it `*` is an ordinary character.
 * @module
 */

/** RFC 6749 §3.3 `scope-token`: printable ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;

/** Whether `scope` is a valid scope token (RFC 6749 §3.3 syntax, at most 128 characters). */
export function isValidScope(scope: unknown): scope is string {
  return typeof scope === 'string' && SCOPE_TOKEN.test(scope);
}

function covers(granted: string, required: string, wildcards: boolean): boolean {
  if (granted === required) return true;
  if (!wildcards) return false;
  if (granted === '*') return true;
  return granted.endsWith(':*') && required.startsWith(granted.slice(0, -1));
}

/**
 * The required scopes `granted` does not cover, in the order they were required.
 *
 * @example
 * ```ts
 * missingScopes(['orders:read'], ['orders:read', 'reports:read']); // ['reports:read']
 * missingScopes(['orders:*'], ['orders:write'], { wildcards: true }); // []
 * ```
 */
export function missingScopes(
  granted: readonly string[],
  required: readonly string[],
  options: { wildcards?: boolean } = {},
): string[] {
  const { wildcards = false } = options;
  const missing: string[] = [];
  for (const need of required) {
    let ok = false;
    for (const have of granted) {
      if (covers(have, need, wildcards)) {
        ok = true;
        break;
      }
    }
    if (!ok && !missing.includes(need)) missing.push(need);
  }
  return missing;
}
