/**
 * keyset's full stack on Hono written plainly by hand: the work no implementation can skip
 * and nothing else, as a developer would write it in an afternoon, so that the in-process
 * benchmark shows what keyset's checks and generality cost over that work.
 *
 * The same work: two Hono middlewares (each awaiting the rest of the chain) and a handler;
 * the key's SHA-256 looked up by digest in a 10,000-entry Map; a GCRA cell per key in
 * another Map; the cursor's HMAC-SHA256 verified and the next and previous cursors signed
 * (two SHA-256 one-shots per HMAC over cached ipad/opad blocks, as keyset's node provider
 * does); base64url through Buffer; the same body (items, nextCursor, prevCursor) and the
 * same headers (Content-Type, Link with next/prev/first, RateLimit, RateLimit-Policy).
 *
 * What it leaves out is everything that makes keyset a library rather than a benchmark:
 * no key format or checksum check, no query-credential refusal, no revocation or expiry,
 * no scopes, no validation of the cursor's payload or of the row values signed into the
 * next cursors, no fingerprint of endpoint, sort and filters, no expiry of cursors, no
 * limit/offset/mode parsing, no public-URL or Link escaping rules, no problem documents.
 * It is not a peer and nobody should ship it: it is a measuring stick. Nor is it a floor:
 * it is written plainly (Buffer.concat, JSON.parse, Buffer's base64url), not tuned.
 */
import { createHash, hash as oneShot } from 'node:crypto';
import { Hono } from 'hono';
import { pageAfter, statusOf, type Order } from './orders.ts';
import { peerKeys } from './peer-stacks.ts';

const SECRET = Buffer.from('benchmark-cursor-secret-0123456789abcdef');
const block = (pad: number) => {
  const out = Buffer.alloc(64, pad);
  for (let i = 0; i < SECRET.length; i++) out[i]! ^= SECRET[i]!;
  return out;
};
const IPAD = block(0x36);
const OPAD = block(0x5c);

/** HMAC-SHA256 (RFC 2104) of `message`, truncated to 16 bytes. */
function mac(message: Buffer): Buffer {
  const inner = oneShot('sha256', Buffer.concat([IPAD, message]), 'buffer') as unknown as Buffer;
  return (oneShot('sha256', Buffer.concat([OPAD, inner]), 'buffer') as unknown as Buffer).subarray(0, 16);
}

function sign(direction: 'f' | 'b', row: Order): string {
  const payload = Buffer.from(JSON.stringify({ d: direction, p: [row.createdAt, row.id] }));
  return Buffer.concat([payload, mac(payload)]).toString('base64url');
}

/** The cursor's position if its MAC is good, else null. */
function verify(cursor: string): { createdAt: string; id: number } | null {
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length <= 16) return null;
  const payload = bytes.subarray(0, bytes.length - 16);
  if (!mac(payload).equals(bytes.subarray(bytes.length - 16))) return null;
  const { p } = JSON.parse(payload.toString()) as { p: [string, number] };
  return { createdAt: p[0], id: p[1] };
}

interface HandRolledEnv {
  Variables: { limits: string[]; after: { createdAt: string; id: number } | null };
}

interface Cell {
  tat: number;
}

export function handRolledHono(count?: number): { app: Hono<HandRolledEnv>; keys: string[] } {
  const { keys } = peerKeys(count);
  const byDigest = new Map(keys.map((key, i) => [createHash('sha256').update(key).digest('hex'), { id: `key_${i}` }]));
  const cells = new Map<string, Cell>();
  const app = new Hono<HandRolledEnv>();
  app.use('/api/*', async (c, next) => {
    const header = c.req.header('authorization');
    const record = header?.startsWith('ApiKey ') ? byDigest.get(oneShot('sha256', header.slice(7))) : undefined;
    if (record === undefined) return c.json({ code: 'invalid_api_key' }, 401);
    const now = Date.now() / 1000;
    let cell = cells.get(record.id);
    if (cell === undefined) cells.set(record.id, (cell = { tat: now }));
    cell.tat = Math.max(cell.tat, now) + 10 / 1_000_000;
    c.set('limits', [`"default";r=${Math.floor(1_000_000 - (cell.tat - now) * 100_000)};t=1`, '"default";q=1000000;w=10']);
    await next();
  });
  app.use('/api/orders', async (c, next) => {
    const cursor = c.req.query('cursor');
    const after = cursor === undefined ? null : verify(cursor);
    if (cursor !== undefined && after === null) return c.json({ code: 'invalid_cursor' }, 400);
    c.set('after', after);
    await next();
  });
  app.get('/api/orders', (c) => {
    const status = c.req.query('status');
    const rows = pageAfter(c.get('after'), 21, statusOf(status));
    const items = rows.slice(0, 20);
    const base = `http://localhost/api/orders?${status === undefined ? '' : `status=${status}&`}limit=20`;
    const nextCursor = rows.length > 20 ? sign('f', items[19]!) : null;
    const prevCursor = c.get('after') === null ? null : sign('b', items[0]!);
    let link = `<${base}>; rel="first"`;
    if (nextCursor !== null) link = `<${base}&cursor=${nextCursor}>; rel="next", ${link}`;
    if (prevCursor !== null) link += `, <${base}&cursor=${prevCursor}>; rel="prev"`;
    const [limit, policy] = c.get('limits');
    return new Response(JSON.stringify({ items, nextCursor, prevCursor }), {
      headers: { 'content-type': 'application/json', link, ratelimit: limit!, 'ratelimit-policy': policy! },
    });
  });
  return { app, keys };
}
