/**
 * What the memory key store hands out and keeps: copies, so that no caller can change
 * stored state by mutating a returned object (or the object it passed in), and the
 * newest-first pages both of its lists answer.
 * @module
 */
import { NODE_INSPECT } from '../../internal/node-inspect.ts';
import type { Quota } from '../../quota/types.ts';
import { freezeMetadata } from '../key-metadata.ts';
import type { ListOwnersQuery, StoredIdentity, StoredKey, StoredOwner, StoredRole, StoredSecret } from '../key-store.ts';

/** Secrets print without their digest: a digest is not key text, but it has no business in logs. */
const SECRET_PROTO: object = Object.freeze(
  Object.create(Object.prototype, {
    toJSON: {
      value(this: StoredSecret) {
        return { last4: this.last4, createdAt: this.createdAt, lastUsedAt: this.lastUsedAt, expiresAt: this.expiresAt };
      },
    },
    [NODE_INSPECT]: {
      value(this: StoredSecret) {
        return `StoredSecret { last4: '${this.last4}' }`;
      },
    },
  }),
);

export const copyDate = (d: Date | null): Date | null => (d === null ? null : new Date(d.getTime()));
export const minDate = (a: Date | null, b: Date): Date => (a !== null && a.getTime() <= b.getTime() ? a : new Date(b.getTime()));

export function copySecret(s: StoredSecret): StoredSecret {
  return Object.assign(Object.create(SECRET_PROTO) as StoredSecret, {
    digest: s.digest,
    last4: s.last4,
    createdAt: new Date(s.createdAt.getTime()),
    lastUsedAt: copyDate(s.lastUsedAt),
    expiresAt: copyDate(s.expiresAt),
    ...(typeof s.pepperId === 'string' ? { pepperId: s.pepperId } : {}),
  });
}

export function copyIdentity(i: StoredIdentity): StoredIdentity {
  return {
    id: i.id,
    name: i.name,
    scopes: [...i.scopes],
    rateLimit: i.rateLimit === null ? null : { limit: i.rateLimit.limit, windowSeconds: i.rateLimit.windowSeconds },
    prefix: i.prefix ?? null,
    // Frozen deep copies: sharing them is safe, and no caller can edit stored metadata.
    metadata: freezeMetadata(i.metadata),
    ipAllowlist: i.ipAllowlist ? Object.freeze([...i.ipAllowlist]) : null,
    // Canonical like the PostgreSQL store: the list, else the single legacy limit as a list.
    rateLimits: (i.rateLimits ?? (i.rateLimit === null ? null : [i.rateLimit]))?.map((l) => ({ ...l })) ?? null,
    quota: copyQuota(i.quota ?? null),
    ...(i.ownerId === null || i.ownerId === undefined ? {} : { ownerId: i.ownerId }),
    ...(i.ownerId === null || i.ownerId === undefined || typeof i.ownerIncarnation !== 'string' ? {} : { ownerIncarnation: i.ownerIncarnation }),
    // Present only once reported, as the PostgreSQL store gives them back.
    ...(i.leakedAt === null || i.leakedAt === undefined ? {} : { leakedAt: new Date(i.leakedAt.getTime()), leakUrl: i.leakUrl ?? null }),
    createdAt: new Date(i.createdAt.getTime()),
    expiresAt: copyDate(i.expiresAt),
    revokedAt: copyDate(i.revokedAt),
  };
}

export function copyRole(r: StoredRole): StoredRole {
  return { name: r.name, permissions: [...r.permissions], description: r.description, createdAt: new Date(r.createdAt.getTime()), updatedAt: new Date(r.updatedAt.getTime()) };
}

export function copyQuota(q: Quota | null): Quota | null {
  if (q === null) return null;
  const copy: Quota = { remaining: q.remaining, refill: q.refill === null ? null : { ...q.refill }, setAt: new Date(q.setAt.getTime()) };
  if (q.mode === 'observe') copy.mode = 'observe';
  return copy;
}

export function copyKey(k: StoredKey): StoredKey {
  return { identity: copyIdentity(k.identity), secrets: k.secrets.map(copySecret) };
}

export function copyOwner(o: StoredOwner): StoredOwner {
  return {
    id: o.id,
    ...(typeof o.incarnation === 'string' ? { incarnation: o.incarnation } : {}),
    metadata: freezeMetadata(o.metadata),
    rateLimits: o.rateLimits === null ? null : o.rateLimits.map((l) => ({ ...l })),
    quota: copyQuota(o.quota ?? null),
    createdAt: new Date(o.createdAt.getTime()),
    disabledAt: copyDate(o.disabledAt),
  };
}

/** One keyset page of `rows` (sorted newest first) per `query`, as both list methods answer it. */
export function pageOf<T extends { createdAt: Date; id: string }>(all: T[], query: ListOwnersQuery): T[] {
  const { after, direction = 'forward' } = query;
  const backward = direction === 'backward';
  let rows = backward ? [...all].reverse() : all;
  // Past the cursor in walking order: older than it going forward, newer going backward.
  if (after !== undefined) rows = rows.filter((i) => (backward ? newestFirst(i, after) : newestFirst(after, i)) < 0);
  if (query.offset !== undefined) rows = rows.slice(query.offset);
  return rows.slice(0, Math.max(0, query.take));
}

/** `createdAt DESC, id DESC`: negative when `a` comes first. */
export function newestFirst(a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }): number {
  const t = b.createdAt.getTime() - a.createdAt.getTime();
  if (t !== 0) return t;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
