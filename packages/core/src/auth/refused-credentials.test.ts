/**
 * A client without a valid key cannot make the key store work for it without end. Refused credentials are counted per client address (trust-proxy rules,
 * IPv6 by /64); past the budget the guard answers 429 before any lookup. Key store
 * lookups are counted on a real memory store, time is a clock the test moves.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, toProblem } from '../errors.ts';
import { createMemoryRateLimitStore } from '../rate-limit/memory-store.ts';
import { createApiKeyGuard, type ApiKeyGuardOptions, type ApiKeyGuardRequest } from './api-key-guard.ts';
import { generateKey } from '../keys/key-format.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring } from './keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { refusalKey } from './refused-credentials.ts';

const PREFIX = 'acme_live';
const quiet = { warn() {}, error() {} };

async function world(refusedCredentials?: ApiKeyGuardOptions['refusedCredentials'], extra: Partial<ApiKeyGuardOptions> = {}) {
  let now = Date.UTC(2026, 0, 1);
  const clock = () => now;
  const memory = createMemoryKeyStore();
  let lookups = 0;
  const store: KeyStore = { ...memory, findByDigest: (digest) => (lookups++, memory.findByDigest(digest)) };
  const keyring = createKeyring({ store, prefix: PREFIX, clock, lastUsed: false, logger: quiet });
  const valid = (await createKeyAdmin(keyring).issue({ name: 'valid', scopes: ['orders:read'] })).key;
  const options: ApiKeyGuardOptions = { keyring, ...extra };
  // The default budget, on the test's clock.
  options.refusedCredentials = refusedCredentials === false ? false : { clock, logger: quiet, ...refusedCredentials };
  const guard = createApiKeyGuard(options);
  /** The status and code of one request (200 when admitted). */
  const send = async (authorization: string, from: Partial<ApiKeyGuardRequest> = { remoteAddress: '203.0.113.7' }) => {
    try {
      await guard.check({ authorization, url: '/api/orders', ...from });
      return { status: 200, code: 'ok', retryAfter: undefined as string | undefined };
    } catch (error) {
      const problem = toProblem(error);
      return { status: problem.status, code: problem.body.code, retryAfter: problem.headers['retry-after'] };
    }
  };
  return { guard, send, valid, lookups: () => lookups, advance: (ms: number) => (now += ms), clock };
}

/** One client sends `count` distinct checksum-valid unknown keys, one every `everyMs`. */
async function flood(w: Awaited<ReturnType<typeof world>>, count: number, everyMs: number, from?: Partial<ApiKeyGuardRequest>) {
  const statuses: Record<number, number> = {};
  for (let i = 0; i < count; i++) {
    w.advance(everyMs);
    const { status } = await w.send(`ApiKey ${generateKey(PREFIX)}`, from);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return statuses;
}

describe('refused credentials per client address', () => {
  it('5,000 checksum-valid unknown keys in 5 s from one address: 5,000 lookups without the budget, 64 with the default', async () => {
    const before = await world(false);
    expect(await flood(before, 5_000, 1)).toEqual({ 401: 5_000 });
    expect(before.lookups()).toBe(5_000);

    const after = await world();
    const statuses = await flood(after, 5_000, 1);
    // The burst of 60, then one per second (60/min) over the 5 s.
    expect(after.lookups()).toBeLessThanOrEqual(60 + 5 + 1);
    expect(statuses[401]).toBe(after.lookups());
    expect(statuses[429]).toBe(5_000 - after.lookups());
    console.info(
      `refused credentials, one address, 1,000 req/s for 5 s: ${before.lookups()} store lookups without the budget (${before.lookups() / 5}/s), ` +
        `${after.lookups()} with the default 60/min (the burst of 60, then 1/s)`,
    );
  });

  it('once over: 429 rate_limited with Retry-After for every request from the address, valid keys too, and no lookup', async () => {
    const w = await world({ limit: 5, windowSeconds: 60 });
    await flood(w, 6, 0);
    const lookups = w.lookups();
    const refused = await w.send(`ApiKey ${generateKey(PREFIX)}`);
    expect(refused).toEqual({ status: 429, code: 'rate_limited', retryAfter: expect.stringMatching(/^[1-9][0-9]*$/) });
    expect((await w.send(`ApiKey ${w.valid}`)).status).toBe(429);
    expect((await w.send('ApiKey nonsense')).status).toBe(429);
    expect(w.lookups()).toBe(lookups);
    // Another address is not affected.
    expect((await w.send(`ApiKey ${w.valid}`, { remoteAddress: '198.51.100.1' })).status).toBe(200);
    // After Retry-After the address may try again (one more refusal fits the budget).
    w.advance(Number(refused.retryAfter) * 1000);
    expect((await w.send(`ApiKey ${w.valid}`)).status).toBe(200);
    expect((await w.send(`ApiKey ${generateKey(PREFIX)}`)).status).toBe(401);
  });

  it('valid keys, missing keys and scope refusals spend nothing from the budget', async () => {
    const w = await world({ limit: 3, windowSeconds: 3600 });
    for (let i = 0; i < 50; i++) {
      expect((await w.send(`ApiKey ${w.valid}`)).status).toBe(200);
      expect((await w.send('')).status).toBe(401);
    }
    expect(await flood(w, 3, 0)).toEqual({ 401: 3 });
    expect((await w.send(`ApiKey ${generateKey(PREFIX)}`)).status).toBe(429);
  });

  it('counts an IPv6 client by its /64, and the address the trust-proxy rules resolve', async () => {
    expect(refusalKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(refusalKey('203.0.113.7')).toBe('203.0.113.7');
    const w = await world({ limit: 2, windowSeconds: 3600 });
    await flood(w, 2, 0, { remoteAddress: '2001:db8:1:2::1' });
    expect((await w.send(`ApiKey ${generateKey(PREFIX)}`, { remoteAddress: '2001:db8:1:2:ffff::9' })).status).toBe(429);
    expect((await w.send(`ApiKey ${generateKey(PREFIX)}`, { remoteAddress: '2001:db8:1:3::1' })).status).toBe(401);
    // No trusted proxy: a forged X-Forwarded-For changes nothing, the peer is counted.
    expect((await w.send(`ApiKey ${generateKey(PREFIX)}`, { remoteAddress: '2001:db8:1:2::1', forwardedFor: '198.51.100.9' })).status).toBe(429);

    const proxied = await world({ limit: 2, windowSeconds: 3600 }, { trustProxy: { hops: 1 } });
    await flood(proxied, 2, 0, { remoteAddress: '10.0.0.1', forwardedFor: '198.51.100.9' });
    expect((await proxied.send(`ApiKey ${generateKey(PREFIX)}`, { remoteAddress: '10.0.0.1', forwardedFor: '198.51.100.9' })).status).toBe(429);
    // Another client behind the same proxy is not.
    expect((await proxied.send(`ApiKey ${generateKey(PREFIX)}`, { remoteAddress: '10.0.0.1', forwardedFor: '198.51.100.10' })).status).toBe(401);
  });

  it('requests at once from a watched address never outnumber the budget left, so they cannot all reach the store', async () => {
    let now = Date.UTC(2026, 0, 1);
    const clock = () => now;
    const memory = createMemoryKeyStore();
    let lookups = 0;
    // A store that answers on a later turn, as a database does: requests overlap.
    const store: KeyStore = { ...memory, findByDigest: async (digest) => (lookups++, await new Promise((r) => setImmediate(r)), memory.findByDigest(digest)) };
    const keyring = createKeyring({ store, prefix: PREFIX, clock, lastUsed: false, logger: quiet });
    const guard = createApiKeyGuard({ keyring, refusedCredentials: { limit: 10, windowSeconds: 3600, clock, logger: quiet } });
    const send = () => guard.check({ authorization: `ApiKey ${generateKey(PREFIX)}`, url: '/', remoteAddress: '203.0.113.7' }).then(() => 200, (e: unknown) => toProblem(e).status);
    expect(await send()).toBe(401); // watched from now on, 9 left
    const statuses = await Promise.all(Array.from({ length: 500 }, send));
    expect(lookups).toBeLessThanOrEqual(10);
    expect(statuses.filter((status) => status === 401).length).toBe(lookups - 1);
    expect(statuses.filter((status) => status === 429).length).toBe(500 - (lookups - 1));
  });

  it('a request that carries no address at all (the runtime gives none) is not counted', async () => {
    const w = await world({ limit: 1, windowSeconds: 3600 });
    expect(await flood(w, 20, 0, {})).toEqual({ 401: 20 });
  });

  it('requests whose address cannot be parsed share one bucket: 300 refused keys reach the store 60 times, not 300', async () => {
    // A trusted proxy that writes `X-Forwarded-For: unknown` (or junk): the client cannot
    // be told apart, so all such requests are counted together rather than not at all.
    const proxied = await world(undefined, { trustProxy: { hops: 1 } });
    const statuses = await flood(proxied, 300, 1, { remoteAddress: '10.0.0.1', forwardedFor: 'unknown' });
    expect(proxied.lookups()).toBeLessThanOrEqual(60 + 1);
    expect(statuses[429]).toBeGreaterThanOrEqual(300 - 61);
    // Another unparsable spelling is the same bucket; a client with an address is not.
    expect((await proxied.send(`ApiKey ${generateKey(PREFIX)}`, { remoteAddress: '10.0.0.1', forwardedFor: 'garbage, also-garbage' })).status).toBe(429);
    expect((await proxied.send(`ApiKey ${proxied.valid}`, { remoteAddress: '10.0.0.1', forwardedFor: '198.51.100.10' })).status).toBe(200);
    // A peer address that is not an address at all, without a proxy: the same rule.
    const direct = await world({ limit: 2, windowSeconds: 3600 });
    expect(await flood(direct, 5, 0, { remoteAddress: 'not-an-ip' })).toEqual({ 401: 2, 429: 3 });
  });

  it('a shared store counts across instances: the budget plus at most one lookup per instance', async () => {
    let now = Date.UTC(2026, 0, 1);
    const clock = () => now;
    const shared = createMemoryRateLimitStore({ clock });
    const memory = createMemoryKeyStore();
    let lookups = 0;
    const store: KeyStore = { ...memory, findByDigest: (digest) => (lookups++, memory.findByDigest(digest)) };
    const guards = [0, 1, 2].map(() =>
      createApiKeyGuard({ keyring: createKeyring({ store, prefix: PREFIX, clock, lastUsed: false, logger: quiet }), refusedCredentials: { limit: 10, windowSeconds: 3600, store: shared, clock, logger: quiet } }),
    );
    for (let i = 0; i < 300; i++) {
      now += 1;
      await guards[i % 3]!.check({ authorization: `ApiKey ${generateKey(PREFIX)}`, url: '/', remoteAddress: '203.0.113.7' }).catch(() => undefined);
    }
    expect(lookups).toBeLessThanOrEqual(10 + 3);
  });

  it('over its budget, an address is refused before its key is read: a valid key too, while other addresses pass', async () => {
    const w = await world({ limit: 1, windowSeconds: 3600 });
    const request = { authorization: 'ApiKey not-a-key', url: '/', remoteAddress: '203.0.113.7' };
    await expect(w.guard.check(request)).rejects.toMatchObject({ code: 'invalid_api_key' });
    await expect(w.guard.check(request)).rejects.toMatchObject({ code: 'rate_limited' });
    const before = w.lookups();
    await expect(w.guard.check({ ...request, authorization: `ApiKey ${w.valid}` })).rejects.toMatchObject({ code: 'rate_limited' });
    expect(w.lookups()).toBe(before);
    await expect(w.guard.check({ ...request, authorization: `ApiKey ${w.valid}`, remoteAddress: '198.51.100.1' })).resolves.toMatchObject({ clientAddress: '198.51.100.1' });
  });

  it('refuses bad options with a ConfigError naming them', async () => {
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, logger: quiet });
    expect(() => createApiKeyGuard({ keyring, refusedCredentials: { limit: 0 } })).toThrow(ConfigError);
    expect(() => createApiKeyGuard({ keyring, refusedCredentials: { maxTracked: 0 } })).toThrow(/maxTracked/);
    expect(() => createApiKeyGuard({ keyring, refusedCredentials: { limt: 5 } as never })).toThrow(/limt/);
    expect(() => createApiKeyGuard({ keyring, refusedCredentials: true as never })).toThrow(ConfigError);
  });
});
