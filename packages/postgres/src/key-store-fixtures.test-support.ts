/**
 * What the KeyStore contract's parts share: the subject a backend hands the suite, the
 * running test's store, and identities, secrets and instants made the same way everywhere.
 * @module
 */
import type { KeyStore } from '@keyset/core';
import type { StoredIdentity, StoredKey, StoredSecret } from '@keyset/core/adapter';

/** What the suite needs from a backend: a store over EMPTY tables, per test. */
export interface ContractSubject {
  store: KeyStore;
  /** Statements the store has sent so far, when the harness counts them (round trips). */
  roundTrips?: () => number;
}

export const T0 = Date.parse('2025-03-04T05:06:07.891Z');
export const at = (ms: number): Date => new Date(T0 + ms);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** A fresh 64-hex digest, as the keyring computes them. */
export function randomDigest(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** An identity with a random id (no counter shared between test files), overridable member by member. */
export function makeIdentity(overrides: Partial<StoredIdentity> = {}): StoredIdentity {
  const id = `key_${randomDigest().slice(0, 16)}`;
  return {
    id,
    name: `key ${id.slice(4, 10)}`,
    scopes: ['orders:read'],
    rateLimit: null,
    prefix: 'acme_test',
    metadata: {},
    ipAllowlist: null,
    createdAt: at(0),
    expiresAt: null,
    revokedAt: null,
    ...overrides,
    // Stores answer in canonical form: the single limit is also the one-element list.
    rateLimits: overrides.rateLimits ?? (overrides.rateLimit ? [{ ...overrides.rateLimit }] : null),
    quota: overrides.quota ?? null,
  };
}

export function makeSecret(overrides: Partial<StoredSecret> = {}): StoredSecret {
  const digest = overrides.digest ?? randomDigest();
  return { digest, last4: digest.slice(-4), createdAt: at(0), lastUsedAt: null, expiresAt: null, ...overrides };
}

/** Walks the whole collection in cursor mode, `size` identities per page. */
export async function walkCursor(store: KeyStore, size: number): Promise<StoredKey[]> {
  const seen: StoredKey[] = [];
  let after: { createdAt: Date; id: string } | undefined;
  for (let pages = 0; pages < 10_000; pages += 1) {
    const { keys } = await store.listIdentities(after === undefined ? { take: size + 1 } : { take: size + 1, after });
    const page = keys.slice(0, size);
    seen.push(...page);
    const last = page.at(-1);
    if (keys.length <= size || last === undefined) return seen;
    after = { createdAt: last.identity.createdAt, id: last.identity.id };
  }
  throw new Error('cursor walk does not end');
}

/** The secrets that verify at instant `t`: created by then and not yet ended (`expiresAt > t`). */
export function liveAt(secrets: readonly StoredSecret[], t: Date): StoredSecret[] {
  const ms = t.getTime();
  return secrets.filter((s) => s.createdAt.getTime() <= ms && (s.expiresAt === null || s.expiresAt.getTime() > ms));
}

/**
 * The most secrets of one identity that verify at the same instant, over its whole
 * history as the stored ends describe it (an identity owns one or two: the current
 * secret and, during a rotation's overlap, the one it replaces).
 */
export function mostLiveAtOnce(secrets: readonly StoredSecret[]): number {
  const instants = secrets.flatMap((s) => (s.expiresAt === null ? [s.createdAt] : [s.createdAt, s.expiresAt]));
  return Math.max(0, ...instants.map((t) => liveAt(secrets, t).length));
}

/** Newest first, then by id descending: the order listIdentities answers in. */
export const byNewest = (a: StoredIdentity, b: StoredIdentity): number =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** What a part of the contract reads at test time: the running test's subject and store. */
export interface ContractRun {
  readonly subject: ContractSubject;
  readonly store: KeyStore;
  /** Inserts an identity and its first secret, each made from the overrides. */
  issue(identity?: Partial<StoredIdentity>, secret?: Partial<StoredSecret>): Promise<{ identity: StoredIdentity; secret: StoredSecret }>;
}
