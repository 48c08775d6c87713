/**
 * `judge` to the millisecond: a secret stops verifying at the instant of its revocation or
 * expiry (not one millisecond later), revocation wins over expiry, and a live secret
 * reports the earliest of its ends, with revocation named when it comes first.
 */
import { describe, expect, it } from 'vitest';
import type { StoredIdentity, StoredSecret } from '../key-store.ts';
import { judge, time } from './key-validity.ts';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const at = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

function verdict(ends: { revokedAt?: number | null; identityExpires?: number | null; secretExpires?: number | null }) {
  const identity = { revokedAt: at(ends.revokedAt ?? null), expiresAt: at(ends.identityExpires ?? null) } as StoredIdentity;
  const secret = { expiresAt: at(ends.secretExpires ?? null) } as StoredSecret;
  return judge(identity, secret, NOW);
}

describe('time', () => {
  it('is the epoch milliseconds of a date and Infinity for none', () => {
    expect(time(new Date(NOW))).toBe(NOW);
    expect(time(null)).toBe(Infinity);
  });
});

describe('judge edges', () => {
  it('verifies with no end at all, until Infinity', () => {
    expect(verdict({})).toEqual({ until: Infinity, endReason: 'expired' });
  });

  it('is revoked from the instant of revocation, and verifies one millisecond before', () => {
    expect(verdict({ revokedAt: NOW })).toEqual({ reason: 'revoked' });
    expect(verdict({ revokedAt: NOW - 1 })).toEqual({ reason: 'revoked' });
    expect(verdict({ revokedAt: NOW + 1 })).toEqual({ until: NOW + 1, endReason: 'revoked' });
  });

  it('is expired from the instant of either expiry, and verifies one millisecond before', () => {
    expect(verdict({ identityExpires: NOW })).toEqual({ reason: 'expired' });
    expect(verdict({ secretExpires: NOW })).toEqual({ reason: 'expired' });
    expect(verdict({ identityExpires: NOW + 1 })).toEqual({ until: NOW + 1, endReason: 'expired' });
    expect(verdict({ secretExpires: NOW + 1 })).toEqual({ until: NOW + 1, endReason: 'expired' });
  });

  it('reports revoked, not expired, when both ends have passed', () => {
    expect(verdict({ revokedAt: NOW - 5, identityExpires: NOW - 10, secretExpires: NOW - 10 })).toEqual({ reason: 'revoked' });
  });

  it('ends at the earlier of the two expiries', () => {
    expect(verdict({ identityExpires: NOW + 10, secretExpires: NOW + 20 })).toEqual({ until: NOW + 10, endReason: 'expired' });
    expect(verdict({ identityExpires: NOW + 20, secretExpires: NOW + 10 })).toEqual({ until: NOW + 10, endReason: 'expired' });
    expect(verdict({ identityExpires: NOW + 20, secretExpires: NOW - 1 })).toEqual({ reason: 'expired' });
  });

  it('names the end that comes first, expiry when both fall on the same instant', () => {
    expect(verdict({ revokedAt: NOW + 10, secretExpires: NOW + 20 })).toEqual({ until: NOW + 10, endReason: 'revoked' });
    expect(verdict({ revokedAt: NOW + 20, identityExpires: NOW + 10 })).toEqual({ until: NOW + 10, endReason: 'expired' });
    expect(verdict({ revokedAt: NOW + 10, secretExpires: NOW + 10 })).toEqual({ until: NOW + 10, endReason: 'expired' });
  });
});
