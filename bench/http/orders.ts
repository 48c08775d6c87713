/**
 * The benchmark's data: 10,000 orders sorted newest first (createdAt DESC, id DESC),
 * with duplicate microsecond timestamps, and one page lookup shared by every stack so
 * that only the middleware differs between them.
 */
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

/** Rows strictly after (createdAt, id) in DESC order; binary search, then slice. */
export function pageAfter(after: { createdAt: string; id: number } | null, take: number): Order[] {
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
export function plainPage(cursor: string | null | undefined, limit = 20): { items: Order[]; nextCursor: string | null } {
  const rows = pageAfter(readPlainCursor(cursor), limit + 1);
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? plainCursor(items[items.length - 1]!) : null };
}

/** The API key every stack accepts. Benchmark-only: printed by the server for the load generator. */
export const BENCH_KEY = 'bench_live_4Zx8QeY1p0aTn7LmB3cV9sKd2Wf6Hj5Gr0E1a2';
