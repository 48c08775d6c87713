/**
 * The OpenAPI document cannot lag the server: a walk over every route of the example, with
 * the bodies the docs teach (several named rate limits, quotas, owners, the limits PATCH)
 * and the refusals a client meets, checks each request and response against
 * `/openapi.json` as the server serves it. Every route and method answered is in `paths`,
 * every status is documented, every body validates against its schema (ajv, JSON Schema
 * 2020-12 as OpenAPI 3.1 uses it), and no member sent or returned is missing from the
 * schema's `properties`: problem members included. Every request body has an example, and
 * the example succeeds as sent (what `/docs` pre-fills in its Try-it form).
 */
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, type CallOptions, type Reply, type TestApi } from './helpers.ts';

type Schema = Record<string, unknown>;
type Document = { paths: Record<string, Record<string, Schema>>; components: Record<string, Record<string, Schema>> };

interface Exchange {
  method: string;
  /** The path template as the document writes it (`/api/keys/{id}`). */
  template: string;
  status: number;
  request?: unknown;
  reply: Reply;
}

let t: TestApi;
let admin: string;
let doc: Document;
const exchanges: Exchange[] = [];

/** One request, recorded with the template it exercises. */
async function send(template: string, path: string, options: CallOptions & { key?: string } = {}): Promise<Reply> {
  const method = options.method ?? 'GET';
  const reply = await call(t.api.url, path, options);
  exchanges.push({ method: method.toLowerCase(), template, status: reply.status, ...(options.body === undefined ? {} : { request: options.body }), reply });
  return reply;
}

/** `$ref` resolved against the document. */
function resolve(schema: Schema): Schema {
  let current = schema;
  while (typeof current.$ref === 'string') {
    const parts = current.$ref.replace(/^#\//, '').split('/');
    current = parts.reduce<any>((node, part) => node[part], doc) as Schema;
  }
  return current;
}

/**
 * Members of `value` that `schema` does not name, as paths. A schema with `properties`
 * must name every member (`additionalProperties: true` on a problem still means "say what
 * you send"); a free-form object (no `properties`, such as `metadata`) names none.
 */
function undocumented(value: unknown, schema: Schema | undefined, path = ''): string[] {
  if (schema === undefined || value === null || typeof value !== 'object') return [];
  const s = resolve(schema);
  const parts = [s, ...((s.allOf as Schema[] | undefined) ?? []).map(resolve)];
  const alternatives = [...((s.oneOf as Schema[] | undefined) ?? []), ...((s.anyOf as Schema[] | undefined) ?? [])].map(resolve);
  if (Array.isArray(value)) {
    const items = parts.map((p) => p.items as Schema | undefined).find((i) => i !== undefined);
    return value.flatMap((item, i) => undocumented(item, items, `${path}[${i}]`));
  }
  const properties: Record<string, Schema> = {};
  for (const part of [...parts, ...alternatives]) Object.assign(properties, (part.properties as Record<string, Schema> | undefined) ?? {});
  if (Object.keys(properties).length === 0) return [];
  return Object.entries(value).flatMap(([name, member]) =>
    name in properties ? undocumented(member, properties[name], `${path}.${name}`) : [`${path}.${name}`],
  );
}

function operation(method: string, template: string): Schema | undefined {
  return doc.paths[template]?.[method];
}

function mediaSchema(content: unknown): Schema | undefined {
  const media = content as Record<string, { schema?: Schema }> | undefined;
  return media?.['application/json']?.schema ?? media?.['application/problem+json']?.schema;
}

beforeAll(async () => {
  // A default limit no walk meets on a fast machine (the default policy is tested elsewhere).
  t = await startApi({ seedOrders: 30, rateLimit: { limit: 1_000_000, windowSeconds: 1 } });
  admin = t.api.adminKey!;
  doc = (await call(t.api.url, '/openapi.json')).body as Document;

  // Owners: create (with shared limits and a quota), read, list, update, list its keys.
  await send('/api/owners', '/api/owners', { method: 'POST', key: admin, body: { id: 'acme', metadata: { plan: 'pro' }, rateLimits: [{ name: 'burst', limit: 50, windowSeconds: 1 }], quota: { remaining: 1000, refill: { amount: 1000, interval: 'monthly' } } } });
  await send('/api/owners/{id}', '/api/owners/acme', { key: admin });
  await send('/api/owners', '/api/owners?limit=5', { key: admin });
  await send('/api/owners/{id}', '/api/owners/acme', { method: 'PATCH', key: admin, body: { metadata: { plan: 'enterprise' } } });

  // Keys: issue with every member the guide lists, read, list, update, limits, rotate.
  const issued = await send('/api/keys', '/api/keys', {
    method: 'POST',
    key: admin,
    body: {
      name: 'reader',
      scopes: ['orders:read', 'reports:read'],
      rateLimits: [{ name: 'default', limit: 100, windowSeconds: 60 }, { name: 'burst', limit: 20, windowSeconds: 1, burst: 5 }],
      quota: { remaining: 500, refill: { amount: 500, interval: 'daily' } },
      expiresAt: '2099-01-01T00:00:00Z',
      metadata: { team: 'data' },
      ipAllowlist: ['127.0.0.1/32', '::1/128'],
      ownerId: 'acme',
    },
  });
  const reader = issued.body.key as string;
  const id = issued.body.id as string;
  await send('/api/keys/{id}', `/api/keys/${id}`, { key: admin });
  await send('/api/keys', '/api/keys?limit=2', { key: admin });
  await send('/api/keys', '/api/keys?limit=2&offset=0', { key: admin });
  await send('/api/keys/{id}', `/api/keys/${id}`, { method: 'PATCH', key: admin, body: { metadata: { team: 'platform' }, ipAllowlist: null } });
  await send('/api/keys/{id}/limits', `/api/keys/${id}/limits`, { method: 'PATCH', key: admin, body: { rateLimit: { limit: 200, windowSeconds: 60 }, quota: { remaining: 400 } } });
  await send('/api/owners/{id}/keys', '/api/owners/acme/keys', { key: admin });

  // Roles: create, list, read, change, assign to the key and its owner, read those back, refusals.
  await send('/api/roles', '/api/roles', { method: 'POST', key: admin, body: { name: 'support', permissions: ['orders:read'], description: 'help desk' } });
  await send('/api/roles', '/api/roles', { key: admin });
  await send('/api/roles/{name}', '/api/roles/support', { key: admin });
  await send('/api/roles/{name}', '/api/roles/support', { method: 'PATCH', key: admin, body: { permissions: ['orders:read', 'reports:read'] } });
  await send('/api/roles/{name}', '/api/roles/nobody', { key: admin });
  await send('/api/keys/{id}/roles', `/api/keys/${id}/roles`, { method: 'PUT', key: admin, body: { roles: ['support'] } });
  await send('/api/keys/{id}/roles', `/api/keys/${id}/roles`, { method: 'PUT', key: admin, body: { roles: ['nobody'] } });
  await send('/api/keys/{id}/roles', `/api/keys/${id}/roles`, { key: admin });
  await send('/api/owners/{id}/roles', '/api/owners/acme/roles', { method: 'PUT', key: admin, body: { roles: ['support'] } });
  await send('/api/owners/{id}/roles', '/api/owners/acme/roles', { key: admin });
  await send('/api/owners/{id}/roles', '/api/owners/nobody/roles', { key: admin });

  // Orders and reports, both modes, filters and sort.
  const first = await send('/api/orders', '/api/orders?limit=2', { key: reader });
  await send('/api/orders', `/api/orders?limit=2&cursor=${encodeURIComponent(first.body.nextCursor as string)}`, { key: reader });
  await send('/api/orders', '/api/orders?limit=2&offset=4&status=paid&sort=-amountCents', { key: reader });
  await send('/api/reports/daily', '/api/reports/daily?date=2025-01-01', { key: reader });

  // Refusals a client meets.
  await send('/api/orders', '/api/orders');
  await send('/api/orders', '/api/orders', { key: 'sk_live_notakey' });
  await send('/api/orders', '/api/orders?limit=1000', { key: reader });
  await send('/api/orders', '/api/orders?limit=0', { key: reader });
  await send('/api/orders', '/api/orders?cursor=abc', { key: reader });
  await send('/api/orders', '/api/orders?cursor=abc&offset=1', { key: reader });
  await send('/api/orders', `/api/orders?api_key=${reader}`, { key: reader });
  await send('/api/orders', '/api/orders?status=lost', { key: reader });
  await send('/api/reports/daily', '/api/reports/daily?date=2024-02-30', { key: reader });
  await send('/api/orders', '/api/orders', { key: admin });
  await send('/api/keys/{id}', '/api/keys/key_unknown', { key: admin });
  await send('/api/keys', '/api/keys', { method: 'POST', key: admin, body: { name: '', scopes: [] } });

  // A quota of one request: the second is 429 quota_exhausted with its members.
  const once = await send('/api/keys', '/api/keys', { method: 'POST', key: admin, body: { name: 'once', scopes: ['orders:read'], quota: { remaining: 1 } } });
  await send('/api/orders', '/api/orders?limit=1', { key: once.body.key });
  await send('/api/orders', '/api/orders?limit=1', { key: once.body.key });
  // A rate limit of one request a minute: the second is 429 rate_limited.
  const slow = await send('/api/keys', '/api/keys', { method: 'POST', key: admin, body: { name: 'slow', scopes: ['orders:read'], rateLimit: { limit: 1, windowSeconds: 60 } } });
  await send('/api/orders', '/api/orders?limit=1', { key: slow.body.key });
  await send('/api/orders', '/api/orders?limit=1', { key: slow.body.key });

  // Usage, flushed first so the buckets hold counts: a key's, an owner's, the top keys, refusals.
  await t.api.keys.usage.counter.flush();
  await send('/api/keys/{id}/usage', `/api/keys/${id}/usage?interval=minute&from=${new Date(Date.now() - 600_000).toISOString()}`, { key: admin });
  await send('/api/owners/{id}/usage', '/api/owners/acme/usage', { key: admin });
  await send('/api/usage/top', '/api/usage/top?by=refusals&limit=5', { key: admin });
  await send('/api/keys/{id}/usage', `/api/keys/${id}/usage?interval=week`, { key: admin });
  await send('/api/keys/{id}/usage', '/api/keys/key_unknown/usage', { key: admin });
  await send('/api/usage/top', '/api/usage/top?limit=0', { key: admin });

  // Rotate, revoke, delete the owner.
  await send('/api/keys/{id}/rotate', `/api/keys/${id}/rotate`, { method: 'POST', key: admin, body: { overlapSeconds: 60 } });
  await send('/api/keys/{id}', `/api/keys/${once.body.id as string}`, { method: 'DELETE', key: admin });
  await send('/api/roles/{name}', '/api/roles/support', { method: 'DELETE', key: admin });
  await send('/api/owners/{id}', '/api/owners/acme', { method: 'DELETE', key: admin });

  // The audit log of all of the above: a filtered cursor page, an offset page, a bad filter.
  const audit = await send('/api/audit', `/api/audit?limit=2&target=${id}`, { key: admin });
  await send('/api/audit', `/api/audit?limit=2&target=${id}&cursor=${encodeURIComponent(audit.body.nextCursor as string)}`, { key: admin });
  await send('/api/audit', '/api/audit?offset=0&limit=3&action=key.issued&from=2000-01-01T00:00:00Z', { key: admin });
  await send('/api/audit', '/api/audit?action=key.frobbed', { key: admin });
}, 120_000);

afterAll(() => t?.stop({ remove: true }));

describe('the OpenAPI document against the live server', () => {
  it('walked every documented operation', () => {
    const documented = Object.entries(doc.paths).flatMap(([template, item]) =>
      Object.keys(item).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} ${template}`),
    );
    const walked = new Set(exchanges.map((e) => `${e.method.toUpperCase()} ${e.template}`));
    expect(documented.filter((op) => !walked.has(op))).toEqual([]);
  });

  it('documents every route and status the server answered', () => {
    const missing = exchanges
      .filter((e) => operation(e.method, e.template)?.responses === undefined || !(String(e.status) in (operation(e.method, e.template)!.responses as Schema)))
      .map((e) => `${e.method.toUpperCase()} ${e.template} → ${e.status}`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('validates every request and response body against its schema, and names every member', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(doc as object, 'openapi');
    const problems: string[] = [];
    const check = (where: string, value: unknown, schema: Schema | undefined): void => {
      if (schema === undefined) {
        if (value !== undefined) problems.push(`${where}: no schema for a body`);
        return;
      }
      const validate = ajv.compile(rebase(schema));
      if (!validate(value)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
      for (const member of undocumented(value, schema)) problems.push(`${where}: undocumented member ${member}`);
    };
    for (const e of exchanges) {
      const op = operation(e.method, e.template);
      if (op === undefined) continue;
      const where = `${e.method.toUpperCase()} ${e.template} ${e.status}`;
      // A request the server refused is meant to break the schema; only accepted ones must fit.
      if (e.request !== undefined && e.status < 300) check(`${where} request`, e.request, mediaSchema((op.requestBody as Schema | undefined)?.content));
      const documented = (op.responses as Record<string, Schema> | undefined)?.[String(e.status)];
      if (documented !== undefined) check(`${where} response`, e.reply.body, mediaSchema(resolve(documented).content));
    }
    expect([...new Set(problems)]).toEqual([]);
  });

  it('gives every request body an example, and each example succeeds as sent', async () => {
    const issued = await call(t.api.url, '/api/keys', { method: 'POST', key: admin, body: { name: 'target', scopes: ['orders:read'] } });
    const owner = `example-${Date.now()}`;
    const failures: string[] = [];
    // The owner routes' examples name an owner: the create example first makes it.
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const body = (op.requestBody as Schema | undefined)?.content as Record<string, { example?: unknown }> | undefined;
        if (body === undefined) continue;
        const example = body['application/json']?.example;
        if (example === undefined) {
          failures.push(`${method.toUpperCase()} ${template}: no example`);
          continue;
        }
        const exampleOwner = template === '/api/owners' ? (example as { id: string }).id : owner;
        if (template === '/api/owners/{id}' && method === 'patch') {
          await call(t.api.url, '/api/owners', { method: 'POST', key: admin, body: { id: owner } });
        }
        const path = template.replace('{id}', template.startsWith('/api/owners') ? exampleOwner : (issued.body.id as string)).replace('{name}', 'analyst');
        const reply = await call(t.api.url, path, { method: method.toUpperCase(), key: admin, body: example });
        if (reply.status >= 300) failures.push(`${method.toUpperCase()} ${template}: ${reply.status} ${reply.text}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

/** A schema with its `#/…` references pointed at the document added to ajv as `openapi`. */
function rebase(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"openapi#/')) as Schema;
}
