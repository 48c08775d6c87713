/**
 * The one echo rule, end to end: keys issued by the example's own keyring, sent whole, cut
 * to any length of 8 or more, split by any separator, percent-encoded (once or twice, some
 * or every character) or case-changed, in every place keyset repeats client text from (the
 * `Authorization` scheme and credentials, `X-API-Key`, query parameter names and values,
 * `sort`, `cursor`, `limit`, a filter, the path and an admin path, `Content-Type`,
 * `Content-Encoding`, `Host`, a body member name, a scope, `X-Request-Id`), to all four adapters over one
 * database, with every credential scheme enabled (`KEY_SCHEMES=ApiKey,Bearer,X-API-Key`).
 * No response (status line, headers, body), no log line, no audit entry and no key record holds 8
 * characters of a key's secret in a row. The servers run with a public base URL, as a deployment should:
 * without one, a `Link` origin repeats the `Host` header (docs/security.md).
 *
 * And the other side of the rule: ordinary words sent in the same places never come back
 * cut (no `…` in any `detail` when no key-shaped text was sent).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretLeak } from '@keyset/test-support';
import { ADAPTERS, type AdapterName } from '../src/config.ts';
import { call, sendRaw as send, serveAlso, startApi, type ExtraServer, type RawRequest as Sent, type TestApi } from './helpers.ts';

const PUBLIC_URL = 'https://api.example.test';

/** Every place a client's text can be echoed from. */
const PLACES = [
  'auth-scheme',
  'auth-apikey',
  'auth-bearer',
  'x-api-key',
  'query-name',
  'query-value',
  'query-filter',
  'query-sort',
  'query-cursor',
  'query-limit',
  'path',
  'admin-path',
  'content-type',
  'content-subtype',
  'content-encoding',
  'host',
  'body-member-name',
  'scopes',
  'request-id',
] as const;
type Place = (typeof PLACES)[number];

/** How a key was made into the text sent. */
interface Variant {
  /** Which of the keyring's keys. */
  which: number;
  /** Where the cut starts in the whole key (`<prefix>_<secret>`), and how long it is (8 or more). */
  start: number;
  length: number;
  /** A separator put in after every `every` characters, or none. */
  split: { sep: string; every: number } | null;
  encode: 'none' | 'some' | 'all' | 'twice';
  kase: 'as-is' | 'lower' | 'upper' | 'swap';
}

const variant: fc.Arbitrary<Variant> = fc.record({
  which: fc.nat({ max: 100 }),
  start: fc.nat({ max: 60 }),
  length: fc.integer({ min: 8, max: 60 }),
  split: fc.option(fc.record({ sep: fc.constantFrom('.', '-', '_', ' ', ':', '/', '~', '+', ',', ';', '|', '=', '*', '@'), every: fc.integer({ min: 1, max: 12 }) }), { nil: null }),
  encode: fc.constantFrom('none', 'some', 'all', 'twice'),
  kase: fc.constantFrom('as-is', 'lower', 'upper', 'swap'),
});

/** The text a variant makes of `key`. */
function mangle(key: string, v: Variant): string {
  const start = Math.min(v.start, key.length - 8);
  let text = key.slice(start, start + Math.max(8, v.length));
  if (v.kase === 'lower') text = text.toLowerCase();
  else if (v.kase === 'upper') text = text.toUpperCase();
  else if (v.kase === 'swap') text = [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  if (v.split !== null) {
    const { sep, every } = v.split;
    const parts: string[] = [];
    for (let i = 0; i < text.length; i += every) parts.push(text.slice(i, i + every));
    text = parts.join(sep);
  }
  const hex = (c: string): string => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
  if (v.encode === 'some') text = [...text].map((c, i) => (i % 2 === 0 ? hex(c) : c)).join('');
  else if (v.encode === 'all') text = [...text].map(hex).join('');
  else if (v.encode === 'twice') text = [...text].map((c) => `%25${hex(c).slice(1)}`).join('');
  return text;
}

describe('the echo rule: no place echoes 8 characters of a key, whatever was done to it, on any adapter', () => {
  let t: TestApi;
  let admin: string;
  let reader: string;
  const keys: string[] = [];
  const origins = new Map<AdapterName, string>();
  const extra: ExtraServer[] = [];

  beforeAll(async () => {
    // Thousands of requests, most with a refused key: neither the default rate limit nor
    // the refused-key budget may answer 429 before the checks under test (both have tests).
    t = await startApi({
      adapter: 'hono',
      seedOrders: 50,
      rateLimit: { limit: 1_000_000, windowSeconds: 1 },
      refusedKeyLimit: false,
      keySchemes: ['ApiKey', 'Bearer', 'X-API-Key'],
      publicUrl: PUBLIC_URL,
    });
    admin = readFileSync(join(t.dataDir, 'admin.key'), 'utf8').trim();
    keys.push(admin);
    origins.set('hono', t.api.url);
    for (const adapter of ADAPTERS) {
      if (adapter === 'hono') continue;
      const server = await serveAlso(t, adapter, { publicUrl: PUBLIC_URL });
      extra.push(server);
      origins.set(adapter, server.url);
    }
    const issued = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'reader', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 1_000_000, windowSeconds: 1 } } });
    expect(issued.status, issued.text).toBe(201);
    reader = issued.body.key;
    keys.push(reader);
    for (let i = 0; i < 3; i++) {
      const victim = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: `victim ${i}`, scopes: ['orders:read'] } });
      expect(victim.status, victim.text).toBe(201);
      keys.push(victim.body.key);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(extra.map((server) => server.close()));
    await t?.stop({ remove: true });
  });

  function request(place: Place, text: string): Sent {
    // In a URL: as it is when it is URL-safe (percent-escapes stay), else encoded.
    const inUrl = /^[A-Za-z0-9._~%-]*$/.test(text) ? text : encodeURIComponent(text);
    const get = (path: string, headers: Record<string, string> = { authorization: `ApiKey ${reader}` }): Sent => ({ method: 'GET', path, headers });
    const post = (headers: Record<string, string>, body: unknown): Sent => ({
      method: 'POST',
      path: '/api/keys',
      headers: { authorization: `ApiKey ${admin}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const issue = { name: 'n', scopes: ['orders:read'] };
    switch (place) {
      case 'auth-scheme':
        return get('/api/orders?limit=2', { authorization: `${text} x` });
      case 'auth-apikey':
        return get('/api/orders?limit=2', { authorization: `ApiKey ${text}` });
      case 'auth-bearer':
        return get('/api/orders?limit=2', { authorization: `Bearer ${text}` });
      case 'x-api-key':
        return get('/api/orders?limit=2', { 'x-api-key': text, 'x-request-id': text });
      case 'query-name':
        return get(`/api/orders?limit=2&${inUrl}=1`);
      case 'query-value':
        return get(`/api/orders?limit=2&utm_source=${inUrl}`);
      case 'query-filter':
        return get(`/api/orders?limit=2&status=${inUrl}`);
      case 'query-sort':
        return get(`/api/orders?limit=2&sort=${inUrl}`);
      case 'query-cursor':
        return get(`/api/orders?limit=2&cursor=${inUrl}`);
      case 'query-limit':
        return get(`/api/orders?limit=${inUrl}`);
      case 'path':
        return get(`/api/orders/${inUrl}`);
      case 'admin-path':
        return get(`/api/keys/${inUrl}`, { authorization: `ApiKey ${admin}` });
      case 'content-type':
        return post({ 'content-type': text }, issue);
      case 'content-subtype':
        return post({ 'content-type': `application/${text}` }, issue);
      case 'content-encoding':
        return post({ 'content-encoding': text }, issue);
      case 'host':
        return get('/api/orders?limit=2', { authorization: `ApiKey ${reader}`, host: text });
      case 'body-member-name':
        return post({}, { ...issue, [text]: 1 });
      case 'scopes':
        return post({}, { ...issue, scopes: ['orders:read', text] });
      case 'request-id':
        // Echoed on every admin change, logged, and stored in its audit entry.
        return post({ 'x-request-id': text }, issue);
    }
  }

  it('keys whole, cut, split, encoded or case-changed: nothing of them in any response, log line, audit entry or key record', async () => {
    const counts = { runs: 0, requests: 0, logLines: 0, byStatus: new Map<number, number>() };
    await fc.assert(
      fc.asyncProperty(variant, async (v) => {
        counts.runs++;
        const key = keys[v.which % keys.length] as string;
        const text = mangle(key, v);
        for (const adapter of ADAPTERS) {
          for (const place of PLACES) {
            const from = t.logs.length;
            const sent = request(place, text);
            const reply = await send(origins.get(adapter) as string, sent);
            counts.requests++;
            counts.byStatus.set(reply.status, (counts.byStatus.get(reply.status) ?? 0) + 1);
            const context = `${adapter} ${place} ${JSON.stringify(v)}: ${sent.method} ${sent.path} ${JSON.stringify(sent.headers)}`;
            expect(reply.status, `${context}\n${reply.text}`).toBeLessThan(500);
            const lines = t.logs.slice(from);
            counts.logLines += lines.length;
            const output = `${reply.text}\n${lines.join('\n')}`;
            expect(secretLeak(output, [key]), `${context}\n${output}`).toBeUndefined();
          }
        }
      }),
      { numRuns: 30 },
    );
    // What was stored: every audit entry (the request ids above among them) and every key
    // record (the keys those requests issued among them), read back page by page.
    const readAll = async (path: string): Promise<unknown[]> => {
      const items: unknown[] = [];
      for (let next: string | null = `${path}?limit=100`; next !== null; ) {
        const page = await call(t.api.url, next, { key: admin });
        expect(page.status, page.text).toBe(200);
        items.push(...page.body.items);
        next = page.body.nextCursor === null ? null : `${path}?limit=100&cursor=${encodeURIComponent(page.body.nextCursor)}`;
      }
      return items;
    };
    const [entries, records] = [await readAll('/api/audit'), await readAll('/api/keys')];
    expect(entries.length).toBeGreaterThan(counts.runs * ADAPTERS.length);
    expect(records.length).toBeGreaterThan(counts.runs * ADAPTERS.length);
    expect(secretLeak(JSON.stringify(entries), keys)).toBeUndefined();
    expect(secretLeak(JSON.stringify(records), keys)).toBeUndefined();
    // The figures the closing notes quote; rerun with this file alone to see them.
    console.log(`echo property: ${counts.runs} key variants × ${ADAPTERS.length} adapters × ${PLACES.length} places = ${counts.requests} requests, ${counts.logLines} log lines, statuses ${JSON.stringify(Object.fromEntries(counts.byStatus))}`);
    expect(counts.requests).toBe(counts.runs * ADAPTERS.length * PLACES.length);
  }, 600_000);

  it('ordinary words in the same places never come back cut: no `…` in a detail when no key was sent', async () => {
    const word = fc.stringMatching(/^[a-z]{8,14}$/);
    await fc.assert(
      fc.asyncProperty(word, fc.constantFrom(...ADAPTERS), async (w, adapter) => {
        for (const place of PLACES) {
          if (place === 'host') continue; // a word is a valid host: the request succeeds
          const reply = await send(origins.get(adapter) as string, request(place, w));
          expect(reply.status, `${adapter} ${place} ${w}\n${reply.text}`).toBeLessThan(500);
          if (typeof reply.json?.detail === 'string') expect(reply.json.detail, `${adapter} ${place} ${w}`).not.toContain('…');
          if (typeof reply.json?.field === 'string') expect(reply.json.field, `${adapter} ${place} ${w}`).not.toContain('…');
        }
      }),
      { numRuns: 12 },
    );
    // The case a newcomer met first: `curl -d …` sends a form.
    const form = await send(t.api.url, { method: 'POST', path: '/api/keys', headers: { authorization: `ApiKey ${admin}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=x' });
    expect(form.json.detail).toBe('Send a JSON body with `Content-Type: application/json`, not `application/x-www-form-urlencoded`');
  }, 300_000);

  it('reads Bearer and X-API-Key as KEY_SCHEMES says, and the OpenAPI document lists the same schemes', async () => {
    for (const adapter of ADAPTERS) {
      const origin = origins.get(adapter) as string;
      for (const headers of [{ authorization: `ApiKey ${reader}` }, { authorization: `Bearer ${reader}` }, { 'x-api-key': reader }]) {
        const reply = await send(origin, { method: 'GET', path: '/api/orders?limit=1', headers });
        expect(reply.status, `${adapter} ${JSON.stringify(Object.keys(headers))}\n${reply.text}`).toBe(200);
      }
      const both = await send(origin, { method: 'GET', path: '/api/orders?limit=1', headers: { authorization: `Bearer ${reader}`, 'x-api-key': reader } });
      expect([both.status, both.json.code, both.json.field]).toEqual([400, 'invalid_request', 'authorization']);
      const none = await send(origin, { method: 'GET', path: '/api/orders?limit=1', headers: {} });
      expect(none.status).toBe(401);
      expect(none.text).toContain('www-authenticate: ApiKey realm="orders-api", Bearer realm="orders-api", X-API-Key realm="orders-api"');
    }
    const { body: document } = await call(t.api.url, '/openapi.json');
    expect(Object.keys(document.components.securitySchemes)).toEqual(['ApiKey', 'Bearer', 'XApiKey']);
    expect(document.paths['/api/orders'].get.security).toEqual([{ ApiKey: [] }, { Bearer: [] }, { XApiKey: [] }]);
  });
});
