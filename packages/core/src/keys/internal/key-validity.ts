/**
 * When a stored secret verifies: it ends at the earliest of its identity's revocation,
 * the identity's expiry and its own expiry. One already revoked is reported `revoked`
 * even when it has also expired.
 * @module
 */
import type { StoredIdentity, StoredSecret } from '../key-store.ts';

/** Epoch ms of an optional end date; `null` (no end) is `Infinity`. */
export const time = (d: Date | null): number => (d === null ? Infinity : d.getTime());

/** Why a secret no longer verifies, or until when it does and what ends it then. */
export type Verdict = { reason: 'expired' | 'revoked' } | { until: number; endReason: 'expired' | 'revoked' };

/** Whether `secret` of `identity` verifies at `now`, and until when. */
export function judge(identity: StoredIdentity, secret: StoredSecret, now: number): Verdict {
  const revokedAt = time(identity.revokedAt);
  if (revokedAt <= now) return { reason: 'revoked' };
  const expires = Math.min(time(identity.expiresAt), time(secret.expiresAt));
  if (expires <= now) return { reason: 'expired' };
  return revokedAt < expires ? { until: revokedAt, endReason: 'revoked' } : { until: expires, endReason: 'expired' };
}
