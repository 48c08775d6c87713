/**
 * The audit log's contract: one `AuditEntry` per administrative change (a key issued,
 * rotated, revoked, updated or reported leaked; an owner created, updated, disabled or
 * deleted; a role created, changed or deleted; the roles of a key or an owner set), appended by the key store in the same atomic step as the change itself, and
 * read newest first. Append-only: no method updates or deletes one entry; `prune` drops
 * the oldest as a retention setting says. Entries hold public fields only, never key
 * text, a digest or a pepper.
 * @module
 */
import type { JsonValue } from '../keys/key-metadata.ts';

/** What an administrator did. */
export type AuditAction =
  | 'key.issued'
  | 'key.rotated'
  | 'key.revoked'
  | 'key.updated'
  | 'key.limits_updated'
  | 'key.leaked'
  | 'owner.created'
  | 'owner.updated'
  | 'owner.disabled'
  | 'owner.deleted'
  | 'owner.roles_set'
  | 'key.roles_set'
  | 'role.created'
  | 'role.updated'
  | 'role.deleted';

/** Every `AuditAction`, in a stable order (for validation and documentation). */
export const AUDIT_ACTIONS: readonly AuditAction[] = Object.freeze([
  'key.issued',
  'key.rotated',
  'key.revoked',
  'key.updated',
  'key.limits_updated',
  'key.leaked',
  'owner.created',
  'owner.updated',
  'owner.disabled',
  'owner.deleted',
  'owner.roles_set',
  'key.roles_set',
  'role.created',
  'role.updated',
  'role.deleted',
] as const);

/** One changed field: its public value before and after the change (`null` when absent). */
export interface AuditChange {
  readonly before: JsonValue;
  readonly after: JsonValue;
}

/** One administrative change. `JSON.stringify` gives the wire form (`at` as ISO 8601). */
export interface AuditEntry {
  /** `aud_` + 22 base62 characters. */
  readonly id: string;
  /** When the change was made (the keyring's clock). */
  readonly at: Date;
  /** Who made it: an admin key's id, `cli`, `secret-scanning`, or a name the application gave. */
  readonly actor: string;
  readonly action: AuditAction;
  readonly target: { readonly type: 'key' | 'owner' | 'role'; readonly id: string };
  /** The fields that changed, by name; `{}` when the call changed nothing (e.g. revoking twice). */
  readonly changes: { readonly [field: string]: AuditChange };
  /** The id of the request that made the change, or `null` (code, a CLI). */
  readonly requestId: string | null;
}

/** Which entries `AuditStore.list` returns; every filter narrows. */
export interface AuditFilters {
  /** The target's id (a key id or an owner id). */
  target?: string;
  actor?: string;
  action?: AuditAction;
  /** Entries at or after this instant. */
  from?: Date;
  /** Entries strictly before this instant. */
  to?: Date;
}

/** Keyset page request over the log, newest first (`at DESC, id DESC`). */
export interface AuditQuery extends AuditFilters {
  /** Rows to fetch: page size + 1, so the caller can tell whether there is more. */
  take: number;
  /** Offset mode: rows to skip. */
  offset?: number;
  /** Cursor mode: the entry to list strictly after, in `direction`'s order. */
  after?: { at: Date; id: string };
  /**
   * `'forward'` lists newest first (entries older than `after`); `'backward'` oldest first
   * (entries newer than `after`), for a page reached through a `prevCursor`.
   * @default 'forward'
   */
  direction?: 'forward' | 'backward';
  /** Whether to count every matching entry (offset mode's `total`). */
  withTotal?: boolean;
}

/**
 * Where audit entries live. A key store that keeps an audit log writes each entry in the
 * same transaction as the change it records (the memory store and `@keyset/postgres` do);
 * this interface reads that log, and `append` serves changes made outside a key store.
 */
export interface AuditStore {
  /** Appends `entry`; rejects, keeping the log as it was, when an entry with its id exists. */
  append(entry: AuditEntry): Promise<void>;
  /** One page of entries matching the query's filters. */
  list(query: AuditQuery): Promise<{ entries: AuditEntry[]; total?: number }>;
  /** Drops every entry older than `before` (retention); resolves how many went. */
  prune(before: Date): Promise<number>;
}

/** Shape of `auditListSort`, a valid pagination `SortSpec`. */
export type AuditListSort = readonly [
  { readonly key: 'at'; readonly dir: 'desc'; readonly type: 'timestamp'; readonly precision: 'ms' },
  { readonly key: 'id'; readonly dir: 'desc'; readonly type: 'string'; readonly unique: true },
];

/**
 * `at DESC, id DESC`: the order of `AuditStore.list`, as a pagination sort spec.
 *
 * @example
 * ```ts
 * const auditPaginator = createPaginator<AuditEntry>({ endpoint: 'GET /api/audit', sort: auditListSort, cursor: { secrets } });
 * ```
 */
export const auditListSort: AuditListSort = Object.freeze([
  // Written from JS Dates (the store's clock), so milliseconds are all it holds: a Date is exact.
  Object.freeze({ key: 'at', dir: 'desc', type: 'timestamp', precision: 'ms' }),
  Object.freeze({ key: 'id', dir: 'desc', type: 'string', unique: true }),
] as const);
