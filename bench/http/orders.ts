/**
 * The benchmark's data: 10,000 orders sorted newest first (createdAt DESC, id DESC),
 * with duplicate microsecond timestamps, and one page lookup shared by every stack so
 * that only the middleware differs between them.
 */
import { setting } from '../settings.ts';

export interface Order {
  id: number;
  createdAt: string;
  customer: string;
  amountCents: number;
  currency: string;
  status: string;
}

const START = Date.UTC(2026, 0, 1);

export const orders: Order[] = Array.from({ length: 10_000 }, (_, i) => {
  const ms = START + Math.floor(i / 3) * 1000; // three orders per timestamp
  const micros = String((i * 7919) % 1_000_000).padStart(6, '0');
  return {
    id: i + 1,
    createdAt: new Date(ms).toISOString().replace(/\.\d{3}Z$/, `.${micros}Z`),
    customer: `customer-${i % 97}`,
    amountCents: 500 + ((i * 31) % 20_000),
    currency: 'EUR',
    status: i % 5 === 0 ? 'refunded' : 'paid',
  };
}).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : b.id - a.id));

/** The filter the benchmark's traffic uses: `?status=paid`, `?status=refunded`, or none. */
export type StatusFilter = 'paid' | 'refunded' | undefined;

const byStatus = {
  all: orders,
  paid: orders.filter((o) => o.status === 'paid'),
  refunded: orders.filter((o) => o.status === 'refunded'),
};

/** `?status=` read the same way by every stack: a known status, else no filter. */
export function statusOf(value: string | null | undefined): StatusFilter {
  return value === 'paid' || value === 'refunded' ? value : undefined;
}

/** Rows strictly after (createdAt, id) in DESC order; binary search, then slice. */
export function pageAfter(after: { createdAt: string; id: number } | null, take: number, status?: StatusFilter): Order[] {
  const orders = byStatus[status ?? 'all'];
  if (after === null) return orders.slice(0, take);
  let lo = 0;
  let hi = orders.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const row = orders[mid]!;
    const before = row.createdAt > after.createdAt || (row.createdAt === after.createdAt && row.id >= after.id);
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return orders.slice(lo, lo + take);
}

/** The plain cursor peers use (typeorm-cursor-pagination, kysely-paginate): base64 JSON, unsigned. */
export function plainCursor(row: Order): string {
  return Buffer.from(JSON.stringify({ createdAt: row.createdAt, id: row.id })).toString('base64url');
}

export function readPlainCursor(text: string | undefined | null): { createdAt: string; id: number } | null {
  if (!text) return null;
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { createdAt: string; id: number };
    return typeof value.createdAt === 'string' && Number.isSafeInteger(value.id) ? value : null;
  } catch {
    return null;
  }
}

/** Page body for the bare and peer stacks: 20 items and an unsigned next cursor. */
export function plainPage(cursor: string | null | undefined, status?: StatusFilter, limit = 20): { items: Order[]; nextCursor: string | null } {
  const rows = pageAfter(readPlainCursor(cursor), limit + 1, status);
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? plainCursor(items[items.length - 1]!) : null };
}

/** Prefix of every benchmark key. */
export const BENCH_PREFIX = 'bench_live';

/** How many distinct keys the traffic rotates through (BENCH_KEYS, default 10,000). */
export const KEY_COUNT: number = setting('BENCH_KEYS', 10_000, 50);
