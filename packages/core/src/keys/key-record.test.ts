import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createScopeLists, toVerifiedKey } from './key-record.ts';
import type { StoredIdentity } from './key-store.ts';

const identity = (scopes: string[], id = 'key_1'): Pick<StoredIdentity, 'id' | 'name' | 'scopes' | 'rateLimit' | 'prefix' | 'metadata' | 'ipAllowlist'> & { createdAt: Date; expiresAt: null; revokedAt: null } => ({
  id,
  name: 'n',
  scopes,
  rateLimit: null,
  prefix: null,
  metadata: {},
  ipAllowlist: null,
  createdAt: new Date(0),
  expiresAt: null,
  revokedAt: null,
});
const scopeLists = createScopeLists();
const verified = (scopes: string[], id?: string, lists = scopeLists) => toVerifiedKey({ identity: identity(scopes, id) as StoredIdentity }, 'live', 'abcd', lists);

describe('toVerifiedKey scopes', () => {
  it('gives keys with the same scopes one frozen list, and never one of another list', () => {
    const a = verified(['orders:read', 'reports:read'], 'key_a');
    const b = verified(['orders:read', 'reports:read'], 'key_b');
    expect(a.scopes).toBe(b.scopes);
    expect(Object.isFrozen(a.scopes)).toBe(true);
    // Lists that would read alike joined by a space, or in another order, stay apart.
    expect(verified(['a b']).scopes).toEqual(['a b']);
    expect(verified(['a', 'b']).scopes).toEqual(['a', 'b']);
    expect(verified(['reports:read', 'orders:read']).scopes).toEqual(['reports:read', 'orders:read']);
  });

  it('shares lists within one verifier\'s lists only; without any, each key gets its own frozen copy', () => {
    const other = createScopeLists();
    const a = verified(['orders:read'], 'key_a');
    expect(verified(['orders:read'], 'key_b', other).scopes).not.toBe(a.scopes);
    const own = toVerifiedKey({ identity: identity(['orders:read']) as StoredIdentity }, 'live', 'abcd');
    expect(own.scopes).toEqual(['orders:read']);
    expect(own.scopes).not.toBe(a.scopes);
    expect(Object.isFrozen(own.scopes)).toBe(true);
  });

  it('always holds exactly the stored scopes, in order, unaffected by later changes to the stored array', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom('a', 'b', 'a b', 'a,b', '"', 'orders:read', ''), { maxLength: 4 }), { maxLength: 30 }), (lists) => {
        for (const list of lists) {
          const stored: string[] = [...list];
          const key = verified(stored);
          stored.push('added:later');
          expect(key.scopes).toEqual(list);
        }
      }),
    );
  });
});
