/**
 * Every admin body refuses unknown members at every depth: `POST
 * /api/keys` took `quota.refil` (201, the quota never refilled), `PATCH
 * /api/keys/{id}/limits` dropped `quota.refill.amout` and `rateLimits[].windowSecond`.
 * Now each is a 400 `invalid_request` whose `field` names the object holding the unknown
 * member (the name itself is client text and is not echoed), with the closest known name
 * suggested; and nothing was changed. Real HTTP on the Hono and Express servers over one
 * PGlite database.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKey } from '@keyset/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

let t: TestApi;
let express: ExtraServer;
let admin: string;
let keyId: string;

const bases = (): [string, string][] => [
  ['hono', t.api.url],
  ['express', express.url],
];

beforeAll(async () => {
  // The admin key has no limit of its own: at the default 100 a second, a fast machine sent
  // the property's 40 bodies (and the cases before it) quickly enough to meet a 429.
  t = await startApi({ adapter: 'hono', seedOrders: 20, rateLimit: { limit: 1_000_000, windowSeconds: 1 } });
  express = await serveAlso(t, 'express');
  admin = readFileSync(join(t.dataDir, 'admin.key'), 'utf8').trim();
  const res = await call(t.api.url, '/api/keys', {
    key: admin,
    method: 'POST',
    body: { name: 'metered', scopes: ['orders:read'], quota: { remaining: 50, refill: { amount: 50, interval: 'daily' } } },
  });
  expect(res.status, res.text).toBe(201);
  keyId = res.body.id;
  const owner = await call(t.api.url, '/api/owners', { key: admin, method: 'POST', body: { id: 'cus_members', quota: { remaining: 9, refill: { amount: 9, interval: 'daily' } } } });
  expect(owner.status, owner.text).toBe(201);
}, 60_000);

afterAll(async () => {
  await express?.close();
  await t?.stop({ remove: true });
});

/** The field the server names for an unknown member at `path`: the object holding it (`body` at the top). */
const holder = (path: string): string => {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? 'body' : path.slice(0, dot);
};

/** Each case: route, body, the path of the unknown member, and the name to suggest. */
const CASES: { route: 'issue' | 'limits' | 'rotate' | 'update'; body: Record<string, unknown>; field: string; suggest?: string }[] = [
  // POST /api/keys
  { route: 'issue', body: { name: 'x', scopes: ['orders:read'], scope: ['orders:read'] }, field: 'scope', suggest: 'scopes' },
  { route: 'issue', body: { name: 'x', scopes: ['orders:read'], quota: { remaining: 5, refil: { amount: 5, interval: 'daily' } } }, field: 'quota.refil', suggest: 'quota.refill' },
  { route: 'issue', body: { name: 'x', scopes: ['orders:read'], quota: { remaining: 5, refill: { amout: 5, interval: 'daily' } } }, field: 'quota.refill.amout', suggest: 'quota.refill.amount' },
  { route: 'issue', body: { name: 'x', scopes: ['orders:read'], rateLimits: [{ name: 'second', limit: 1, windowSeconds: 1 }, { name: 'day', limit: 9, windowSecond: 86_400 }] }, field: 'rateLimits[1].windowSecond', suggest: 'rateLimits[1].windowSeconds' },
  { route: 'issue', body: { name: 'x', scopes: ['orders:read'], rateLimit: { limit: 1, windowSeconds: 1, brust: 2 } }, field: 'rateLimit.brust', suggest: 'rateLimit.burst' },
  // PATCH /api/keys/{id}/limits
  { route: 'limits', body: { quota: { remaining: 5, refil: { amount: 5, interval: 'daily' } } }, field: 'quota.refil', suggest: 'quota.refill' },
  { route: 'limits', body: { quota: { remaining: 5, refill: { amout: 5, interval: 'daily' } } }, field: 'quota.refill.amout', suggest: 'quota.refill.amount' },
  { route: 'limits', body: { quota: { refill: { amount: 5, intervall: 'daily' } } }, field: 'quota.refill.intervall', suggest: 'quota.refill.interval' },
  { route: 'limits', body: { rateLimits: [{ name: 'second', limit: 1, windowSecond: 1 }] }, field: 'rateLimits[0].windowSecond', suggest: 'rateLimits[0].windowSeconds' },
  { route: 'limits', body: { rateLimit: { limit: 1, windowSeconds: 1, extra: true } }, field: 'rateLimit.extra' },
  { route: 'limits', body: { rateLimits: null, quotas: null }, field: 'quotas', suggest: 'quota' },
  // POST /api/keys/{id}/rotate and PATCH /api/keys/{id}
  { route: 'rotate', body: { overlapSeconds: 0, overlap: 60 }, field: 'overlap' },
  { route: 'update', body: { metadata: { team: 'ci' }, ipAllowList: ['10.0.0.0/8'] }, field: 'ipAllowList', suggest: 'ipAllowlist' },
];

const request = (base: string, route: (typeof CASES)[number]['route'], body: unknown) => {
  switch (route) {
    case 'issue':
      return call(base, '/api/keys', { key: admin, method: 'POST', body });
    case 'limits':
      return call(base, `/api/keys/${keyId}/limits`, { key: admin, method: 'PATCH', body });
    case 'rotate':
      return call(base, `/api/keys/${keyId}/rotate`, { key: admin, method: 'POST', body });
    case 'update':
      return call(base, `/api/keys/${keyId}`, { key: admin, method: 'PATCH', body });
  }
};

describe('admin bodies refuse unknown members at every depth', () => {
  it.each(CASES.map((c) => [`${c.route} ${c.field}`, c] as const))('%s → 400 naming the field', async (_title, c) => {
    for (const [adapter, base] of bases()) {
      const before = await call(base, `/api/keys/${keyId}`, { key: admin });
      const res = await request(base, c.route, c.body);
      expect(res.status, `${adapter}: ${res.text}`).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', field: holder(c.field) });
      expect(res.body.detail).toContain(`\`${holder(c.field)}\` has an unknown field`);
      // The unknown name itself is not echoed.
      expect(res.text).not.toContain(`${c.field.slice(c.field.lastIndexOf('.') + 1)}\``);
      if (c.suggest !== undefined) expect(res.body.detail).toContain(`did you mean \`${c.suggest}\`?`);
      // Nothing changed: the refused request left the key as it was.
      const after = await call(base, `/api/keys/${keyId}`, { key: admin });
      expect(after.body).toEqual(before.body);
    }
  });

  it.each([
    ['POST', { id: 'cus_unknown', quota: { remaining: 5, refil: { amount: 5, interval: 'daily' } } }, 'quota.refil', 'quota.refill'],
    ['POST', { id: 'cus_unknown', quota: { remaining: 5, refill: { amout: 5, interval: 'daily' } } }, 'quota.refill.amout', 'quota.refill.amount'],
    ['POST', { id: 'cus_unknown', quotas: { remaining: 5 } }, 'quotas', 'quota'],
    ['PATCH', { quota: { remaining: 5, remainig: 4 } }, 'quota.remainig', undefined],
    ['PATCH', { quota: { refill: { amount: 5, intervall: 'daily' } } }, 'quota.refill.intervall', 'quota.refill.interval'],
  ] as const)("owner quota: %s %j → 400 naming %s, nothing changed", async (method, body, field, suggest) => {
    for (const [adapter, base] of bases()) {
      const path = method === 'POST' ? '/api/owners' : '/api/owners/cus_members';
      const before = await call(base, '/api/owners/cus_members', { key: admin });
      const res = await call(base, path, { key: admin, method, body });
      expect(res.status, `${adapter}: ${res.text}`).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', field: holder(field) });
      if (suggest !== undefined) expect(res.body.detail).toContain(`did you mean \`${suggest}\`?`);
      expect((await call(base, '/api/owners/cus_members', { key: admin })).body).toEqual(before.body);
      expect((await call(base, '/api/owners/cus_unknown', { key: admin })).status).toBe(404);
    }
  });

  it('accepts the same bodies spelt right', async () => {
    for (const [adapter, base] of bases()) {
      const issued = await request(base, 'issue', {
        name: 'right',
        scopes: ['orders:read'],
        rateLimits: [{ name: 'second', limit: 5, windowSeconds: 1, burst: 5 }],
        quota: { remaining: 5, refill: { amount: 5, interval: 'daily' } },
      });
      expect(issued.status, `${adapter}: ${issued.text}`).toBe(201);
      expect(issued.body.quota).toMatchObject({ refill: { amount: 5, interval: 'daily' } });
      const limits = await request(base, 'limits', { rateLimits: [{ name: 'day', limit: 9, windowSeconds: 86_400 }], quota: { remaining: 7, refill: { amount: 9, interval: 'monthly' } } });
      expect(limits.status, `${adapter}: ${limits.text}`).toBe(200);
      expect(limits.body).toMatchObject({ rateLimits: [{ name: 'day', limit: 9, windowSeconds: 86_400 }], quota: { remaining: 7, refill: { amount: 9, interval: 'monthly' } } });
    }
  });

  it('does not quote an unknown name: no key, no long text, in field or detail', async () => {
    const key = generateKey('acme_live');
    const long = 'x'.repeat(9000);
    for (const [adapter, base] of bases()) {
      for (const body of [
        { quota: { remaining: 1, refill: { amount: 1, interval: 'daily', [key]: 1 } } },
        { rateLimits: [{ name: 'a', limit: 1, windowSeconds: 1, [long]: 1 }] },
      ]) {
        const res = await request(base, 'limits', body);
        expect(res.status, `${adapter}: ${res.text}`).toBe(400);
        expect(res.text).not.toContain(key.slice(-20, -12));
        expect(res.text.length).toBeLessThan(2000);
      }
    }
  });

  it('property: any member added at any depth of a valid limits body is refused with its path', async () => {
    // Valid bodies and where a member can stand; the added name is not one we know there.
    const known: Record<string, readonly string[]> = {
      '': ['rateLimit', 'rateLimits', 'quota'],
      quota: ['remaining', 'refill'],
      'quota.refill': ['amount', 'interval'],
      'rateLimits[0]': ['name', 'limit', 'windowSeconds', 'burst'],
    };
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,7}$/);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(known)), name, async (at, member) => {
        fc.pre(!known[at]!.includes(member) && member !== '__proto__');
        const body: Record<string, any> = { rateLimits: [{ name: 'n', limit: 1, windowSeconds: 1 }], quota: { remaining: 3, refill: { amount: 3, interval: 'daily' } } };
        const target = at === '' ? body : at === 'rateLimits[0]' ? body.rateLimits[0] : at.split('.').reduce((o, k) => o[k], body);
        target[member] = 1;
        const res = await request(t.api.url, 'limits', body);
        const field = at === '' ? member : `${at}.${member}`;
        expect(res.status, res.text).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_request', field: holder(field) });
      }),
      { numRuns: 40 },
    );
  });
});
