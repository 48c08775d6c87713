/**
 * Permission queries against a brute-force reading of the same formula: a query is
 * satisfied exactly when the plain boolean evaluation over "is this permission granted"
 * says so, and the permissions a refusal names, once granted, satisfy it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { grantsQuery, missingPermissions, permissionQuery, type PermissionQuery } from './permission-query.ts';

const POOL = ['orders:read', 'orders:write', 'orders:admin', 'reports:read', 'keys:admin', 'billing:read'];
const WILD_POOL = [...POOL, 'orders:*', '*'];

const query: fc.Arbitrary<PermissionQuery> = fc.letrec<{ q: PermissionQuery }>((tie) => ({
  q: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...POOL),
    fc.record({ and: fc.array(tie('q'), { minLength: 1, maxLength: 4 }) }),
    fc.record({ or: fc.array(tie('q'), { minLength: 1, maxLength: 4 }) }),
  ),
})).q;

/** The formula read as booleans over set membership (with wildcards as scopes.ts defines them). */
function bruteForce(node: PermissionQuery, granted: ReadonlySet<string>, wildcards: boolean): boolean {
  if (typeof node === 'string') {
    if (granted.has(node)) return true;
    if (!wildcards) return false;
    return [...granted].some((g) => g === '*' || (g.endsWith(':*') && node.startsWith(g.slice(0, -1))));
  }
  return 'and' in node ? node.and.every((part) => bruteForce(part, granted, wildcards)) : node.or.some((part) => bruteForce(part, granted, wildcards));
}

/** How deep a query nests and how many parts it holds, counted the plain way. */
function depthOf(node: PermissionQuery): number {
  return typeof node === 'string' ? 1 : 1 + Math.max(...('and' in node ? node.and : node.or).map(depthOf));
}
function partsOf(node: PermissionQuery): number {
  return typeof node === 'string' ? 1 : 1 + ('and' in node ? node.and : node.or).reduce((sum, part) => sum + partsOf(part), 0);
}

function atoms(node: PermissionQuery): string[] {
  return typeof node === 'string' ? [node] : ('and' in node ? node.and : node.or).flatMap(atoms);
}

describe('permission queries (properties)', () => {
  it('a query is satisfied iff the brute-force evaluation says so, and then nothing is missing', () => {
    fc.assert(
      fc.property(query, fc.subarray(WILD_POOL), fc.boolean(), (q, granted, wildcards) => {
        const expected = bruteForce(q, new Set(granted), wildcards);
        expect(grantsQuery(granted, q, { wildcards })).toBe(expected);
        expect(missingPermissions(granted, q, { wildcards }).length === 0).toBe(expected);
      }),
    );
  });

  it('the missing set, once granted, satisfies the query; it names only permissions of the query, never one granted', () => {
    fc.assert(
      fc.property(query, fc.subarray(WILD_POOL), fc.boolean(), (q, granted, wildcards) => {
        const missing = missingPermissions(granted, q, { wildcards });
        expect(bruteForce(q, new Set([...granted, ...missing]), wildcards)).toBe(true);
        expect(new Set(missing).size).toBe(missing.length);
        for (const need of missing) {
          expect(atoms(q)).toContain(need);
          expect(bruteForce(need, new Set(granted), wildcards)).toBe(false);
        }
      }),
    );
  });

  it('for an `or`, the missing set is no larger than what any one branch misses', () => {
    fc.assert(
      fc.property(fc.array(query, { minLength: 1, maxLength: 5 }), fc.subarray(POOL), (parts, granted) => {
        const missing = missingPermissions(granted, { or: parts });
        for (const part of parts) expect(missing.length).toBeLessThanOrEqual(missingPermissions(granted, part).length);
      }),
    );
  });

  it('permissionQuery keeps every query within 8 deep and 256 parts as it is, frozen, and refuses the rest', () => {
    fc.assert(
      fc.property(query, (q) => {
        if (depthOf(q) > 8 || partsOf(q) > 256) {
          expect(() => permissionQuery(q)).toThrow(ConfigError);
          return;
        }
        const copy = permissionQuery(q);
        expect(copy).toEqual(q);
        expect(Object.isFrozen(copy)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('permissionQuery: what a route may not declare', () => {
  it.each([
    ['an empty and', { and: [] }],
    ['an empty or', { or: [] }],
    ['both operators in one node', { and: ['a:b'], or: ['c:d'] }],
    ['an unknown operator', { not: ['a:b'] }],
    ['an array', ['orders:read']],
    ['a scope with a space', 'orders read'],
    ['a number', 42],
    ['null', null],
    ['nesting past 8', { and: [{ and: [{ and: [{ and: [{ and: [{ and: [{ and: [{ and: ['a:b'] }] }] }] }] }] }] }] }],
  ])('refuses %s with a ConfigError', (_name, value) => {
    expect(() => permissionQuery(value)).toThrow(ConfigError);
  });
});
