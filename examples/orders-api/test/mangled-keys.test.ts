/**
 * End to end: keys issued by the example's own keyring, mangled the ways keys get mangled
 * when copied, scraped or probed (separator swapped, bare secret, last character
 * cut, one deleted, `_` or `-` typed in, `_` percent-encoded up to four times, lowercased),
 * sent anywhere in a request (path, query name and value, `Authorization`, `Host`,
 * `Content-Type` and other headers, body member names and stored fields) to all four
 * adapters over one database. The example's real logger (pino, its `redactText` net and
 * `redactUrlForLog`) writes the lines; no response (status, headers, body) and no log
 * line holds 8 characters in a row of any key's secret, and key text offered as a stored
 * field is refused naming the field.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mangleKey, MANGLES, secretLeak, type Mangle } from '@keyset/test-support';
import { ADAPTERS, type AdapterName } from '../src/config.ts';
import { call, sendRaw as send, serveAlso, startApi, type ExtraServer, type RawRequest as Sent, type TestApi } from './helpers.ts';

/** Where a mangled key goes, and what the answer must be beyond holding none of it. */
const PLACES = [
  'path',
  'admin-path',
  'query-value',
  'query-cursor',
  'query-sort',
  'query-name',
  'authorization',
  'x-api-key',
  'host',
  'content-type',
  'body-member-name',
  'nested-member-name',
  'name',
  'scopes',
  'metadata-value',
  'metadata-name',
  'rate-limit-name',
] as const;
type Place = (typeof PLACES)[number];

/** Fields a key-shaped value must be refused in, naming the field. */
const STORED: Partial<Record<Place, string>> = { name: 'name', 'metadata-value': 'metadata', 'metadata-name': 'metadata', 'rate-limit-name': 'rateLimits[0].name' };

describe('mangled keys anywhere in a request: nothing leaked, nothing reflected, nothing stored', () => {
  let t: TestApi;
  let admin: string;
  let reader: string;
  let keyId: string;
  const keys: string[] = [];
  const origins = new Map<AdapterName, string>();
  const extra: ExtraServer[] = [];

  beforeAll(async () => {
    // Hundreds of admin requests a second on a fast machine: the default policy (100/1s) and
    // the refused-key budget (60/min per address, and every mangled key is refused) would
    // answer 429 before the checks under test; both are tested on their own elsewhere.
    t = await startApi({ adapter: 'hono', seedOrders: 50, rateLimit: { limit: 1_000_000, windowSeconds: 1 }, refusedKeyLimit: false });
    admin = readFileSync(join(t.dataDir, 'admin.key'), 'utf8').trim();
    keys.push(admin);
    origins.set('hono', t.api.url);
    for (const adapter of ADAPTERS) {
      if (adapter === 'hono') continue;
      const server = await serveAlso(t, adapter);
      extra.push(server);
      origins.set(adapter, server.url);
    }
    const issued = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'reader', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 100_000, windowSeconds: 1 } } });
    expect(issued.status, issued.text).toBe(201);
    reader = issued.body.key;
    keyId = issued.body.id;
    keys.push(reader);
    // More keys of the keyring, only ever sent mangled.
    for (let i = 0; i < 4; i++) {
      const victim = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: `victim ${i}`, scopes: ['orders:read'] } });
      expect(victim.status, victim.text).toBe(201);
      keys.push(victim.body.key);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(extra.map((server) => server.close()));
    await t?.stop({ remove: true });
  });

  function request(place: Place, text: string, encoded: string): Sent {
    const json = (body: unknown): Pick<Sent, 'body' | 'headers'> => ({ body: JSON.stringify(body), headers: { authorization: `ApiKey ${admin}`, 'content-type': 'application/json' } });
    const get = (path: string, headers: Record<string, string> = {}): Sent => ({ method: 'GET', path, headers: { authorization: `ApiKey ${reader}`, ...headers } });
    switch (place) {
      case 'path':
        return get(`/api/orders/${encoded}`);
      case 'admin-path':
        return { method: 'POST', path: `/api/keys/${encoded}/rotate`, ...json({ overlapSeconds: 0 }) };
      case 'query-value':
        return get(`/api/orders?limit=2&status=${encoded}`);
      case 'query-cursor':
        return get(`/api/orders?limit=2&cursor=${encoded}`);
      case 'query-sort':
        return get(`/api/orders?limit=2&sort=${encoded}`);
      case 'query-name':
        return get(`/api/orders?limit=2&${encoded}=1`);
      case 'authorization':
        return { method: 'GET', path: '/api/orders?limit=2', headers: { authorization: `ApiKey ${text}` } };
      case 'x-api-key':
        return get('/api/orders?limit=2', { 'x-api-key': text, 'x-request-id': text });
      case 'host':
        return get('/api/orders?limit=2', { host: text });
      case 'content-type':
        return { method: 'POST', path: '/api/keys', body: '{"name":"n","scopes":["orders:read"]}', headers: { authorization: `ApiKey ${admin}`, 'content-type': text } };
      case 'body-member-name':
        return { method: 'POST', path: '/api/keys', ...json({ name: 'n', scopes: ['orders:read'], [text]: 1 }) };
      case 'nested-member-name':
        return { method: 'PATCH', path: `/api/keys/${keyId}/limits`, ...json({ quota: { remaining: 5, [text]: 1 } }) };
      case 'name':
        return { method: 'POST', path: '/api/keys', ...json({ name: text, scopes: ['orders:read'] }) };
      case 'scopes':
        return { method: 'POST', path: '/api/keys', ...json({ name: 'n', scopes: ['orders:read', text] }) };
      case 'metadata-value':
        return { method: 'POST', path: '/api/keys', ...json({ name: 'n', scopes: ['orders:read'], metadata: { owner: { team: text } } }) };
      case 'metadata-name':
        return { method: 'PATCH', path: `/api/keys/${keyId}`, ...json({ metadata: { [text]: 'x' } }) };
      case 'rate-limit-name':
        return { method: 'POST', path: '/api/keys', ...json({ name: 'n', scopes: ['orders:read'], rateLimits: [{ name: text.replace(/[^A-Za-z0-9_.-]/g, '_'), limit: 5, windowSeconds: 60 }] }) };
    }
  }

  it('no response and no log line holds 8 characters of a secret; key text is refused as a stored field', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 100 }),
        fc.constantFrom(...MANGLES),
        fc.nat({ max: 1000 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(...PLACES),
        fc.constantFrom(...ADAPTERS),
        fc.constantFrom('', 'x', 'q='),
        async (which, how: Mangle, at, times, place, adapter, glue) => {
          const key = keys[which % keys.length] as string;
          const mangled = mangleKey(key, how, at, times);
          const text = `${glue}${mangled}`;
          // In a URL: as it is when it is URL-safe (a percent-encoded `_` stays encoded), else encoded.
          const encoded = /^[A-Za-z0-9._~%=-]*$/.test(text) ? text : encodeURIComponent(text);
          const from = t.logs.length;
          const sent = request(place, text, encoded);
          const reply = await send(origins.get(adapter) as string, sent);
          const context = `${adapter} ${place} ${how}: ${sent.method} ${sent.path}`;
          expect(reply.status, `${context}\n${reply.text}`).toBeLessThan(500);
          const output = `${reply.text}\n${t.logs.slice(from).join('\n')}`;
          expect(secretLeak(output, [key]), `${context}\n${output}`).toBeUndefined();
          const field = STORED[place];
          if (field !== undefined) {
            expect([reply.status, reply.json?.code, reply.json?.field], `${context}\n${reply.text}`).toEqual([400, 'invalid_request', field]);
          }
        },
      ),
      { numRuns: 400 },
    );
    // The property saw the logger at work: request lines, with their URLs cut up.
    expect(t.logs.some((line) => line.includes('"msg":"request"'))).toBe(true);
  }, 240_000);

  it('a 9 KB unknown member name does not come back at all: the field names the object holding it', async () => {
    const huge = 'n'.repeat(9000);
    const reply = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'n', scopes: ['orders:read'], [huge]: 1 } });
    expect([reply.status, reply.body.code]).toEqual([400, 'invalid_request']);
    expect(reply.text.length).toBeLessThan(1000);
    expect(reply.body.field).toBe('body');
    expect(reply.text).not.toContain('nnn');
  });

  it('a key offered as a stored field is refused naming it (name, metadata, rate-limit names)', async () => {
    const victim = keys[2] as string;
    for (const how of MANGLES) {
      const sent = mangleKey(victim, how, 17, 2);
      for (const [body, field] of [
        [{ name: sent, scopes: ['orders:read'] }, 'name'],
        [{ name: 'n', scopes: ['orders:read'], metadata: { note: sent } }, 'metadata'],
        [{ name: 'n', scopes: ['orders:read'], rateLimits: [{ name: sent.replace(/%/g, '_'), limit: 5, windowSeconds: 60 }] }, 'rateLimits[0].name'],
      ] as const) {
        const reply = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body });
        expect([reply.status, reply.body.code, reply.body.field], `${how} ${field}`).toEqual([400, 'invalid_request', field]);
      }
    }
    // Nothing of the kind was stored.
    const list = await call(t.api.url, '/api/keys?limit=100', { key: admin });
    expect(secretLeak(list.text, [victim])).toBeUndefined();
  });
});
