/**
 * Every adapter answers alike: the same requests (edge cases of paths, methods, bodies,
 * headers and parameters) go to the four servers over one database, and the status, the
 * headers a client acts on and the whole problem body must be the same on each. Requests
 * go through node:http, which sends paths and bodies exactly as written (dot segments and
 * malformed %-encodings included: `fetch()` would resolve or re-encode them).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, type AdapterName } from '../src/config.ts';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

/** The admin key has no limit of its own: at the default 100 a second a fast machine met a 429 where
 * the test expects another answer (these tests were run at a default of 20 a second to find them). */
const ADMIN_LIMIT = { limit: 1_000_000, windowSeconds: 1 };

interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(base: string, method: string, path: string, headers: Record<string, string | string[]>, body?: string): Promise<Sent> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What a client acts on: status, media type, Allow, WWW-Authenticate, RateLimit, the problem (whole) or the body's members. */
function observed(res: Sent): Record<string, unknown> {
  let body: unknown;
  try {
    body = res.text === '' ? undefined : JSON.parse(res.text);
  } catch {
    body = res.text.length;
  }
  const type = String(res.headers['content-type'] ?? '').split(';', 1)[0];
  const problem = type === 'application/problem+json';
  return {
    status: res.status,
    type,
    allow: res.headers.allow,
    wwwAuthenticate: res.headers['www-authenticate'],
    rateLimitPolicy: res.headers['ratelimit-policy'],
    retryAfter: res.headers['retry-after'] !== undefined,
    body: problem || typeof body !== 'object' || body === null ? body : Object.keys(body).sort(),
  };
}

let t: TestApi;
const servers = new Map<AdapterName, ExtraServer>();
let admin: string;
let reader: string;
let limited: string;

beforeAll(async () => {
  t = await startApi({ seedOrders: 30, rateLimit: ADMIN_LIMIT });
  admin = t.api.adminKey!;
  const issue = async (body: Record<string, unknown>): Promise<string> => (await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body })).body.key;
  reader = await issue({ name: 'reader', scopes: ['orders:read'], rateLimit: { limit: 100_000, windowSeconds: 1 } });
  // One request per adapter per case, then refused: the 429 case sends each adapter its 2nd.
  limited = await issue({ name: 'limited', scopes: ['orders:read'], rateLimit: { limit: 4, windowSeconds: 3600 } });
  for (const adapter of ADAPTERS) servers.set(adapter, await serveAlso(t, adapter));
}, 60_000);

afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.close()));
  await t?.stop({ remove: true });
});

const json = { 'content-type': 'application/json' };
const asAdmin = (headers: Record<string, string> = {}) => ({ authorization: `ApiKey ${admin}`, ...headers });
const asReader = () => ({ authorization: `ApiKey ${reader}` });
const big = JSON.stringify({ name: 'x'.repeat(20_000), scopes: ['orders:read'] });

/** What core's request rules answer for the request-target cases below (no field: Node's HTTP parser refuses first, bare 400). */
const REQUEST_RULES: Record<string, { field?: string; instance?: string }> = {
  'a percent-encoded letter': { field: 'path', instance: '/%61pi/keys' },
  'a percent-encoded letter, no key': { field: 'path', instance: '/%61pi/keys' },
  'a percent-encoded digit in an id': { field: 'path', instance: '/api/keys/key_%31' },
  'a percent-encoded tilde': { field: 'path', instance: '/healthz%7E' },
  'an empty Content-Type': { field: 'content-type', instance: '/api/keys' },
  'an empty Content-Type on a GET': { field: 'content-type', instance: '/api/orders' },
  'a blank Content-Type': { field: 'content-type', instance: '/api/keys' },
  'an invalid Host on an open route': { field: 'host', instance: '/healthz' },
  'an invalid Host on a keyed route': { field: 'host', instance: '/api/keys/key_x' },
  'an invalid Host on a paginated route': { field: 'host', instance: '/api/orders' },
  'a Host with a bad port': { field: 'host', instance: '/healthz' },
  'an asterisk target': { field: 'path', instance: '*' },
  'OPTIONS with an asterisk target': { field: 'path', instance: '*' },
  'a backslash in the path': { field: 'path', instance: '/api%5Corders' },
  'a leading backslash': {},
  'two Authorization headers': { field: 'authorization', instance: '/api/keys/key_x' },
  'two Authorization headers, the same key': { field: 'authorization', instance: '/api/orders' },
  'two credentials in one header': { field: 'authorization', instance: '/api/orders' },
  'another scheme, then a key': { field: 'authorization', instance: '/api/orders' },
};

describe('every adapter answers alike', () => {
  it.each<[label: string, method: string, path: string, headers: () => Record<string, string | string[]>, body?: string]>([
    ['a trailing slash', 'GET', '/api/orders/', asReader],
    ['another case', 'GET', '/API/orders', asReader],
    ['a doubled slash', 'GET', '//api/orders', asReader],
    ['a page', 'GET', '/api/orders?limit=2&sort=-amountCents', asReader],
    ['HEAD on a GET route', 'HEAD', '/api/orders?limit=1', asReader],
    ['OPTIONS on a known path', 'OPTIONS', '/api/orders', asReader],
    ['an unusual method on a known path', 'PROPFIND', '/api/keys/key_x', asAdmin],
    ['a 405 before authentication', 'PUT', '/api/keys', () => ({})],
    ['an encoded slash in an id', 'GET', '/api/keys/a%2Fb', asAdmin],
    // A malformed %-encoding or a dot segment: 400 invalid_request (field: path) before routing,
    // authentication or the method, on every server (docs/adapters.md, "Request paths").
    ['a truncated %-escape in an id', 'GET', '/api/keys/%E0%A4%A', asAdmin],
    ['a truncated %-escape, no key', 'GET', '/api/keys/%E0%A4%A', () => ({})],
    ['escapes that are not UTF-8 in an id', 'GET', '/api/keys/%E0%A4', asAdmin],
    ['a malformed escape after a path', 'GET', '/api/orders%ZZ', asReader],
    ['a malformed escape on an open path', 'GET', '/healthz%ZZ', () => ({})],
    ['a malformed escape under another method', 'GET', '/api/keys/%ZZ/rotate', asAdmin],
    ['a malformed escape with a key in the query', 'GET', `/api/orders%ZZ?api_key=${'k'.repeat(8)}`, asReader],
    ['a malformed escape in the query only', 'GET', '/healthz?x=%ZZ', () => ({})],
    ['a double-dot segment', 'GET', '/api/keys/../orders', asReader],
    ['a single-dot segment', 'GET', '/api/./orders', asReader],
    ['a dot segment on an open path', 'GET', '/./healthz', () => ({})],
    ['a dot segment as an id', 'GET', '/api/keys/..', asAdmin],
    ['an encoded double-dot segment', 'GET', '/api/%2e%2e/orders', asReader],
    ['a dot segment in a body route', 'POST', '/api/keys/./', () => asAdmin(json), '{}'],
    ['dots inside a segment', 'GET', '/api/keys/..x', asAdmin],
    ['a 300-character id', 'GET', `/api/keys/${'k'.repeat(300)}`, asAdmin],
    ['health with a query', 'GET', '/healthz?x=1', () => ({})],
    ['the docs page with a slash', 'GET', '/docs/', () => ({})],
    ['the OpenAPI document', 'GET', '/openapi.json', () => ({})],
    ['another scheme', 'GET', '/api/orders', () => ({ authorization: 'Bearer x' })],
    ['a key in the query', 'GET', `/api/orders?api_key=${'k'.repeat(8)}&limit=1`, asReader],
    ['a repeated limit', 'GET', '/api/orders?limit=1&limit=2', asReader],
    ['a malformed limit encoding', 'GET', '/api/orders?limit=%zz', asReader],
    ['a forged cursor', 'GET', '/api/orders?cursor=abc', asReader],
    ['a missing scope', 'GET', '/api/reports/daily?date=2024-01-01', asReader],
    ['no Content-Type', 'POST', '/api/keys', asAdmin, '{"name":"a","scopes":["orders:read"]}'],
    ['text/plain', 'POST', '/api/keys', () => asAdmin({ 'content-type': 'text/plain' }), '{"name":"a","scopes":["orders:read"]}'],
    ['a body over the limit', 'POST', '/api/keys', () => asAdmin(json), big],
    ['a chunked body over the limit', 'POST', '/api/keys', () => asAdmin({ ...json, 'transfer-encoding': 'chunked' }), big],
    ['an empty body', 'POST', '/api/keys', () => asAdmin(json), ''],
    ['a charset parameter', 'POST', '/api/keys', () => asAdmin({ 'content-type': 'application/json; charset=utf-16' }), '{"name":"b","scopes":["orders:read"]}'],
    ['a content coding', 'POST', '/api/keys', () => asAdmin({ ...json, 'content-encoding': 'gzip' }), '{}'],
    ['a byte order mark', 'POST', '/api/keys', () => asAdmin(json), '\uFEFF{"name":"c","scopes":["orders:read"]}'],
    ['a duplicate member', 'POST', '/api/keys', () => asAdmin(json), '{"name":"d","scopes":["orders:read"],"name":"e"}'],
    ['a __proto__ member', 'POST', '/api/keys', () => asAdmin(json), '{"__proto__":{"x":1},"name":"f","scopes":["orders:read"]}'],
    ['malformed JSON, no key', 'POST', '/api/keys', () => json, '{"name":'],
    ['an empty rotate body', 'POST', '/api/keys/key_x/rotate', () => asAdmin(json), ''],
    ['a merge-patch body', 'PATCH', '/api/keys/key_x', () => asAdmin({ 'content-type': 'application/merge-patch+json' }), '{"metadata":{}}'],
    ['a JSON array', 'PATCH', '/api/keys/key_x/limits', () => asAdmin(json), '[]'],
    ['a DELETE with a body', 'DELETE', '/api/keys/key_x', () => asAdmin({ ...json, 'content-length': String(big.length) }), big],
    ['a 405 with a body', 'PUT', '/api/keys', () => asAdmin(json), big],
    ['a 404 with a body', 'POST', '/api/nope', () => asAdmin(json), '{"a":'],
    // One rule for each on every adapter (docs/adapters.md, "Requests").
    ['a percent-encoded letter', 'GET', '/%61pi/keys', asAdmin],
    ['a percent-encoded letter, no key', 'GET', '/%61pi/keys', () => ({})],
    ['a percent-encoded digit in an id', 'GET', '/api/keys/key_%31', asAdmin],
    ['a percent-encoded tilde', 'GET', '/healthz%7E', () => ({})],
    ['an empty Content-Type', 'POST', '/api/keys', () => asAdmin({ 'content-type': '' }), '{"name":"g","scopes":["orders:read"]}'],
    ['an empty Content-Type on a GET', 'GET', '/api/orders?limit=1', () => ({ ...asReader(), 'content-type': '' })],
    ['a blank Content-Type', 'POST', '/api/keys', () => asAdmin({ 'content-type': '  ' }), '{"name":"h","scopes":["orders:read"]}'],
    ['an invalid Host on an open route', 'GET', '/healthz', () => ({ host: 'a/b' })],
    ['an invalid Host on a keyed route', 'GET', '/api/keys/key_x', () => asAdmin({ host: 'a/b' })],
    ['an invalid Host on a paginated route', 'GET', '/api/orders?limit=1', () => ({ ...asReader(), host: 'a/b' })],
    ['a Host with a bad port', 'GET', '/healthz', () => ({ host: 'localhost:99999' })],
    ['an asterisk target', 'GET', '*', () => ({})],
    ['OPTIONS with an asterisk target', 'OPTIONS', '*', () => ({})],
    ['a backslash in the path', 'GET', '/api\\orders', asReader],
    ['a leading backslash', 'GET', '\\api/orders', asReader],
    ['a backslash in the query', 'GET', '/healthz?x=\\', () => ({})],
    // Ambiguous credentials are refused alike.
    ['two Authorization headers', 'DELETE', '/api/keys/key_x', () => ({ authorization: [`ApiKey ${admin}`, `ApiKey ${reader}`] })],
    ['two Authorization headers, the same key', 'GET', '/api/orders?limit=1', () => ({ authorization: [`ApiKey ${reader}`, `ApiKey ${reader}`] })],
    ['two credentials in one header', 'GET', '/api/orders?limit=1', () => ({ authorization: `ApiKey ${reader}, ApiKey ${admin}` })],
    ['another scheme, then a key', 'GET', '/api/orders?limit=1', () => ({ authorization: ['Bearer x', `ApiKey ${reader}`] })],
  ])('%s: %s %s', async (_label, method, path, headers, body) => {
    const answers: Record<string, unknown> = {};
    for (const [adapter, server] of servers) answers[adapter] = observed(await send(server.url, method, path, headers(), body));
    const expected = Object.fromEntries(ADAPTERS.map((adapter) => [adapter, answers.hono]));
    expect(answers).toEqual(expected);
    const rule = REQUEST_RULES[_label];
    if (rule !== undefined) {
      expect(answers.hono).toMatchObject({ status: 400, ...(rule.field === undefined ? {} : { type: 'application/problem+json', body: { code: 'invalid_request', field: rule.field, instance: rule.instance } }) });
    }
    if (/%E0|%ZZ|\/(\.|%2e){1,2}(\/|$)/i.test(path.split('?', 1)[0]!)) {
      expect(answers.hono).toMatchObject({ status: 400, type: 'application/problem+json', body: { code: 'invalid_request', field: 'path', instance: path.split('?', 1)[0] } });
    }
  });

  it('a DELETE with an admin key and then a user key is refused on each, and revokes nothing', async () => {
    for (const [adapter, server] of servers) {
      const victim = (await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: `victim-${adapter}`, scopes: ['orders:read'] } })).body as { id: string; key: string };
      const res = await send(server.url, 'DELETE', `/api/keys/${victim.id}`, { authorization: [`ApiKey ${admin}`, `ApiKey ${reader}`] });
      expect({ adapter, ...observed(res) }).toMatchObject({ adapter, status: 400, body: { code: 'invalid_request', field: 'authorization' } });
      expect((await send(server.url, 'GET', '/api/orders?limit=1', { authorization: `ApiKey ${victim.key}` })).status).toBe(200);
    }
  });

  it('the same 429, with Retry-After and RateLimit, on each', async () => {
    const answers: Record<string, unknown> = {};
    for (const [adapter, server] of servers) {
      // The limit is shared (4 per hour): each adapter sees the same position in it.
      answers[adapter] = observed(await send(server.url, 'GET', '/api/orders?limit=1', { authorization: `ApiKey ${limited}` }));
    }
    expect(Object.values(answers).map((a) => (a as { status: number }).status)).toEqual([200, 200, 200, 200]);
    const refused: Record<string, unknown> = {};
    for (const [adapter, server] of servers) {
      const res = await send(server.url, 'GET', '/api/orders?limit=1', { authorization: `ApiKey ${limited}` });
      refused[adapter] = { ...observed(res), body: (JSON.parse(res.text) as { code: string }).code };
    }
    expect(refused).toEqual(Object.fromEntries(ADAPTERS.map((adapter) => [adapter, refused.hono])));
    expect(refused.hono).toMatchObject({ status: 429, retryAfter: true, body: 'rate_limited' });
  });
});
