/**
 * `AuditStore` in process memory, with the same order, filters and paging as the
 * PostgreSQL one. Its `appendWith` runs a change and appends the change's entry in one
 * synchronous step: what the memory key store calls, so no other call sees one without
 * the other.
 * @module
 */
import type { AuditEntry, AuditQuery, AuditStore } from './audit-store.ts';

/** An `AuditStore` in memory, which a memory key store can write in its own atomic step. */
export interface MemoryAuditStore extends AuditStore {
  /**
   * Checks that `entry` can be appended (its id is new), runs `change`, then appends the
   * entry, all in one synchronous step, and returns what `change` returned. When the check
   * fails, `change` does not run; when `change` throws, nothing is appended. For a memory
   * store writing its changes; application code reads the log with `list`.
   */
  appendWith<T>(entry: AuditEntry, change: () => T): T;
}

/** `at DESC, id DESC`: negative when `a` comes first. */
function newestFirst(a: { at: Date; id: string }, b: { at: Date; id: string }): number {
  const t = b.at.getTime() - a.at.getTime();
  if (t !== 0) return t;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function copyEntry(e: AuditEntry): AuditEntry {
  return Object.freeze({
    ...e,
    at: new Date(e.at.getTime()),
    target: Object.freeze({ ...e.target }),
    changes: Object.freeze(JSON.parse(JSON.stringify(e.changes)) as AuditEntry['changes']),
  });
}

/**
 * An audit log held in memory; data is lost when the process ends. Give it to
 * `createMemoryKeyStore({ audit })` and every change the store makes appends its entry.
 *
 * @example
 * ```ts
 * const audit = createMemoryAuditStore();
 * const keyring = createKeyring({ store: createMemoryKeyStore({ audit }), prefix: 'acme_test' });
 * const { entries } = await audit.list({ take: 20, action: 'key.revoked' });
 * ```
 */
export function createMemoryAuditStore(): MemoryAuditStore {
  // Newest first, as listed: appends are nearly always newest, so insertion stays cheap.
  const entries: AuditEntry[] = [];
  const ids = new Set<string>();

  function assertNew(entry: AuditEntry): void {
    if (typeof entry?.id !== 'string' || !(entry.at instanceof Date)) throw new TypeError('An audit entry needs an `id` and an `at` date');
    if (ids.has(entry.id)) throw new Error(`audit entry ${entry.id} already exists`);
  }

  function push(entry: AuditEntry): void {
    const copy = copyEntry(entry);
    let n = 0;
    while (n < entries.length && newestFirst(entries[n]!, copy) < 0) n++;
    entries.splice(n, 0, copy);
    ids.add(copy.id);
  }

  return Object.freeze({
    appendWith<T>(entry: AuditEntry, change: () => T): T {
      assertNew(entry);
      const result = change();
      push(entry);
      return result;
    },

    async append(entry: AuditEntry): Promise<void> {
      assertNew(entry);
      push(entry);
    },

    async list(query: AuditQuery): Promise<{ entries: AuditEntry[]; total?: number }> {
      const { target, actor, action, from, to, after, direction = 'forward' } = query;
      const all = entries.filter(
        (e) =>
          (target === undefined || e.target.id === target) &&
          (actor === undefined || e.actor === actor) &&
          (action === undefined || e.action === action) &&
          (from === undefined || e.at.getTime() >= from.getTime()) &&
          (to === undefined || e.at.getTime() < to.getTime()),
      );
      const backward = direction === 'backward';
      let rows = backward ? [...all].reverse() : all;
      // Past the cursor in walking order: older than it going forward, newer going backward.
      if (after !== undefined) rows = rows.filter((e) => (backward ? newestFirst(e, after) : newestFirst(after, e)) < 0);
      if (query.offset !== undefined) rows = rows.slice(query.offset);
      const page = rows.slice(0, Math.max(0, query.take)).map(copyEntry);
      return query.withTotal === true ? { entries: page, total: all.length } : { entries: page };
    },

    async prune(before: Date): Promise<number> {
      let n = entries.length;
      while (n > 0 && entries[n - 1]!.at.getTime() < before.getTime()) n--;
      const gone = entries.splice(n);
      for (const e of gone) ids.delete(e.id);
      return gone.length;
    },
  });
}
