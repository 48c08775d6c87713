/**
 * The options every adapter takes alike, checked the same way on each: `apiKey({ clientAddress })`,
 * a guard's `trustProxy`, `paginate({ filters: (query, request) })` and `sendPage({ headers })`.
 * Test support only.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { OPTION_PEER } from './fixture.ts';
import { auth } from './conformance-run.ts';
import type { ConformanceRun } from './conformance-run.ts';
import { expectProblem } from './expect-problem.ts';

/** Registers the checks of the options every adapter takes alike. */
export function describeOptionConformance(run: ConformanceRun): void {
  const { adapter, get } = run;
  describe('options, the same on every adapter', () => {
    it('apiKey({ clientAddress }) names the client the guard sees: a key allowlisted for it is admitted', async () => {
      const res = await get('/options/peer', auth(run.fixture.keys.elsewhere));
      expect(res.status, `${OPTION_PEER} is in 203.0.113.0/24`).toBe(200);
      expect(await res.json()).toMatchObject({ name: 'elsewhere' });
    });

    it("a guard's trustProxy decides whether X-Forwarded-For is read, and every adapter hands it the header", async () => {
      const elsewhere = (forwardedFor?: string): RequestInit => ({ headers: { authorization: `ApiKey ${run.fixture.keys.elsewhere}`, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) } });
      // Behind a proxy the guard trusts only a peer it knows: with no socket, no header is believed.
      const behindProxy = await get('/options/proxied', elsewhere('203.0.113.5'));
      if (adapter.peer === 'unknown') await expectProblem(behindProxy, 403, 'ip_not_allowed');
      else expect(behindProxy.status).toBe(200);
      await expectProblem(await get('/options/proxied', elsewhere('198.51.100.1')), 403, 'ip_not_allowed');
      // The default guard trusts no proxy: the same header is not read.
      await expectProblem(await get('/whoami', elsewhere('203.0.113.5')), 403, 'ip_not_allowed');
    });

    it('paginate({ filters: (query, request) }) binds what it reads from the request into the cursor', async () => {
      const tenant = (name: string): RequestInit => ({ headers: { 'x-tenant': name } });
      const first = await get('/options/page?limit=2', tenant('a'));
      expect(first.status).toBe(200);
      const { nextCursor } = (await first.json()) as { nextCursor: string };
      expect((await get(`/options/page?limit=2&cursor=${encodeURIComponent(nextCursor)}`, tenant('a'))).status).toBe(200);
      await expectProblem(await get(`/options/page?limit=2&cursor=${encodeURIComponent(nextCursor)}`, tenant('b')), 400, 'invalid_cursor');
    });

    it("sendPage({ headers }) adds the route's headers; the page's Link and JSON content type win", async () => {
      const res = await get('/options/page?limit=2', { headers: { 'x-tenant': 'a' } });
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('link')).toMatch(/rel="next"/);
    });
  });
}
