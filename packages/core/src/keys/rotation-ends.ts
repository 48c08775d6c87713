/**
 * The end dates a rotation gives an identity's existing secrets (the `KeyStore.addSecret`
 * contract), as one pure function: the memory store applies it, and the keyring uses it
 * to describe the rotated key without another store round trip.
 * @module
 */
import type { StoredSecret } from './key-store.ts';

const time = (d: Date | null): number => (d === null ? Infinity : d.getTime());

/**
 * Index of the identity's current secret at `now`: the newest one still live
 * (`expiresAt` null or after `now`), newest by `createdAt`, ties to the one listed first
 * (`secrets` is newest first, so the later insert). `-1` when none is live.
 */
export function currentSecretIndex(secrets: readonly StoredSecret[], now: number): number {
  let current = -1;
  secrets.forEach((s, n) => {
    if (time(s.expiresAt) <= now) return;
    if (current === -1 || s.createdAt.getTime() > (secrets[current] as StoredSecret).createdAt.getTime()) current = n;
  });
  return current;
}

/**
 * The `expiresAt` of each of `secrets` (newest first) after a rotation at `now` whose
 * overlap ends at `expireOthersAt`: the current secret gets `min(own, expireOthersAt)`,
 * every other one `min(own, now)`. No end is ever extended; the same `Date` object is
 * returned when an end does not change.
 */
export function rotationEnds(secrets: readonly StoredSecret[], now: number, expireOthersAt: number): (Date | null)[] {
  const current = currentSecretIndex(secrets, now);
  return secrets.map((s, n) => {
    const end = n === current ? expireOthersAt : now;
    return time(s.expiresAt) <= end ? s.expiresAt : new Date(end);
  });
}
