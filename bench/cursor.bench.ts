/**
 * Cost of one page's cursor work, per request: parse the query, fingerprint the scope,
 * verify + decode the incoming cursor, then encode + sign the next one. Compared with
 * the "plain base64 JSON cursor" of peers (typeorm-cursor-pagination, kysely-paginate):
 * JSON.stringify + base64 out, base64 + JSON.parse in, no signature, no type checks.
 * Run: `npx -y pnpm@10.34.9 bench cursor`.
 */
import { createCursorCodec, createPaginator, defineSortSpec } from '@keyset/core';
import { cursorFingerprint } from '@keyset/core/adapter';
import { compare, save } from './support.ts';

interface Order {
  id: string;
  createdAt: string;
  status: string;
}

const sort = defineSortSpec([
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
]);
const secrets = ['bench-secret-bench-secret-bench-secret-0123'];
const paginator = createPaginator<Order>({ endpoint: 'GET /api/orders', sort, cursor: { secrets } });
const codec = createCursorCodec({ secrets });
const rows: Order[] = Array.from({ length: 21 }, (_, i) => ({
  id: String(9_007_199_254_740_000n + BigInt(i)),
  createdAt: `2024-05-01 10:00:00.${String(123_456 + i).padStart(6, '0')}+00`,
  status: 'paid',
}));
const url = new URL('https://api.example.com/api/orders?status=paid&limit=20');
const filters = { status: 'paid' };

// A cursor from a previous page, as the client sends it back.
const firstPlan = await paginator.plan(url.searchParams, { filters });
const first = await paginator.page(firstPlan, rows, { url });
const incoming = (first.body as { nextCursor: string }).nextCursor;
const query = new URLSearchParams(url.search);
query.set('cursor', incoming);
const fingerprint = await cursorFingerprint({ endpoint: 'GET /api/orders', sort, filters });
const position = ['2024-05-01 10:00:00.123476+00', '9007199254740020'] as const;

// The peers' cursor: the last row's sort values, JSON, base64. Anyone can edit it.
function plainEncode(row: Order): string {
  return Buffer.from(JSON.stringify({ createdAt: row.createdAt, id: row.id })).toString('base64');
}
function plainDecode(text: string): { createdAt: string; id: string } {
  return JSON.parse(Buffer.from(text, 'base64').toString('utf8')) as { createdAt: string; id: string };
}
const plainIncoming = plainEncode(rows[19]!);

const pageRows = await compare('cursor page cycle (decode incoming + encode next)', 'plain base64 JSON', [
  {
    name: 'plain base64 JSON',
    fn: () => {
      const limit = Number(query.get('limit') ?? 20);
      const after = plainDecode(plainIncoming);
      return [limit, after, plainEncode(rows[limit - 1]!)];
    },
  },
  {
    name: 'keyset plan + page (signed)',
    fn: async () => {
      const plan = await paginator.plan(query, { filters });
      return paginator.page(plan, rows, { url });
    },
  },
  {
    name: 'keyset codec only (verify+decode, encode+sign)',
    fn: async () => [await codec.decode(incoming, fingerprint, sort), await codec.encode(position, fingerprint, sort)],
  },
]);

save('cursor', { pageRows, cursorLength: { keyset: incoming.length, plain: plainIncoming.length } });
