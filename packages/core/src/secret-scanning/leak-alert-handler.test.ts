/**
 * The secret-scanning alert endpoint with alerts signed by a test key pair made with Web
 * Crypto, as GitHub signs them (ECDSA P-256, SHA-256, base64 DER). A valid alert revokes
 * the key on two keyring instances before the answer; a tampered body, a wrong signature,
 * an unknown key id, a non-existent token and a replay revoke nothing. Under either policy
 * the key's record shows `leakedAt` and the cleaned `leakUrl` when the answer arrives; the
 * first report is kept; refused alerts record nothing.
 */
import fc from 'fast-check';
import { githubAlertSigner, secretLeak } from '@keyset/test-support';
import { describe, expect, it } from 'vitest';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { AuthenticationError, ConfigError, toProblem } from '../errors.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createKeyring, type Keyring } from '../auth/keyring.ts';
import { generateKey } from '../keys/key-format.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { GitHubPublicKey } from './github-public-keys.ts';
import { createLeakAlertHandler, type LeakAlertHandlerOptions, type LeakEvent } from './leak-alert-handler.ts';

const URL_ = 'https://keys.example/secret-scanning/github';

/** Store calls the alert handler causes, and the most lookups that were waiting at once. */
interface StoreCalls {
  findByDigest: number;
  recordLeak: number;
  revoke: number;
  maxLookupsAtOnce: number;
}

/** A memory store that counts calls; each lookup waits `lookupDelayMs` (a slow database). */
function countingStore(calls: StoreCalls, lookupDelayMs: number): KeyStore {
  const inner = createMemoryKeyStore();
  let lookups = 0;
  return {
    ...inner,
    async findByDigest(digest) {
      calls.findByDigest++;
      calls.maxLookupsAtOnce = Math.max(calls.maxLookupsAtOnce, ++lookups);
      try {
        if (lookupDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, lookupDelayMs));
        return await inner.findByDigest(digest);
      } finally {
        lookups--;
      }
    },
    async recordLeak(id, at, url) {
      calls.recordLeak++;
      return inner.recordLeak!(id, at, url);
    },
    async revoke(id, at) {
      calls.revoke++;
      return inner.revoke(id, at);
    },
  };
}

async function setup(extra: Partial<LeakAlertHandlerOptions> = {}, clock: () => number = Date.now, lookupDelayMs = 0) {
  const github = await githubAlertSigner();
  const published: GitHubPublicKey[] = [{ key_identifier: 'k1', key: github.pem, is_current: true }];
  let fetches = 0;
  const calls: StoreCalls = { findByDigest: 0, recordLeak: 0, revoke: 0, maxLookupsAtOnce: 0 };
  const store = countingStore(calls, lookupDelayMs);
  // Two instances over one store; each revocation reaches the other through onChange, as
  // a revocation bus carries it (the Redis and PostgreSQL buses have their own tests).
  const a = createKeyring({ store, prefix: 'acme_live', lastUsed: false, clock });
  const b = createKeyring({ store, prefix: 'acme_live', lastUsed: false, clock });
  a.onChange((event) => b.invalidate(event.id));
  const admin = createKeyAdmin(a);
  const { key } = await admin.issue({ name: 'ci', scopes: ['orders:read'] });
  await Promise.all([a.verify(key), b.verify(key)]); // both instances cache it as valid
  const events: LeakEvent[] = [];
  const logs: unknown[] = [];
  const handler = createLeakAlertHandler({
    keyring: a,
    admin,
    publicKeys: { fetch: async () => (fetches++, published) },
    onLeak: (e) => void events.push(e),
    logger: { info: (fields, message) => void logs.push([fields, message]), warn: (fields, message) => void logs.push([fields, message, 'warn']) },
    ...extra,
  });
  const post = async (body: string, headers: Record<string, string>): Promise<Response> =>
    handler(new Request(URL_, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } }));
  const signed = async (body: string, id = 'k1'): Promise<Response> =>
    post(body, { 'github-public-key-identifier': id, 'github-public-key-signature': await github.sign(body) });
  const alert = (token: string): string => JSON.stringify([{ token, type: 'acme_live_key', url: 'https://github.com/o/r/blob/abc/config.yml', source: 'content' }]);
  return { a, b, admin, key, handler, post, signed, alert, github, published, events, logs, calls, fetches: () => fetches };
}

async function live(keyring: Keyring, key: string): Promise<boolean> {
  try {
    await keyring.verify(key);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(AuthenticationError);
    return false;
  }
}

async function problem(response: Response): Promise<Record<string, unknown>> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as Record<string, unknown>;
}

describe('createLeakAlertHandler', () => {
  it('a valid alert revokes the key on both instances before it answers, and labels it true_positive', async () => {
    const s = await setup();
    const response = await s.signed(s.alert(s.key));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([{ token_raw: s.key, token_type: 'acme_live_key', label: 'true_positive' }]);
    expect([await live(s.a, s.key), await live(s.b, s.key)]).toEqual([false, false]);
    const refused = await s.b.authenticate({ authorization: `ApiKey ${s.key}`, url: '/api/orders' }).catch((e: unknown) => e);
    expect(toProblem(refused).status).toBe(401);
    const url = 'https://github.com/o/r/blob/abc/config.yml';
    expect(s.events).toEqual([{ keyId: expect.any(String), last4: s.key.slice(-4), action: 'revoked', type: 'acme_live_key', source: 'content', leakUrl: url }]);
    expect((await s.admin.get(s.events[0]!.keyId)).revokedAt).not.toBeNull();
    // Logs: the last four characters only.
    expect(JSON.stringify(s.logs)).not.toContain(s.key.slice(0, -4));
    expect(JSON.stringify(s.logs)).toContain(s.key.slice(-4));
  });

  it("policy 'mark' leaves the key live and calls onLeak", async () => {
    const s = await setup({ policy: 'mark' });
    expect((await s.signed(s.alert(s.key))).status).toBe(200);
    expect(await live(s.a, s.key)).toBe(true);
    expect(s.events.map((e) => e.action)).toEqual(['marked']);
  });

  it('labels tokens it never issued false_positive and revokes nothing', async () => {
    const s = await setup();
    const stranger = generateKey('acme_live');
    const lookalike = `acme_live_${'a'.repeat(38)}`;
    const body = JSON.stringify([
      { token: stranger, type: 'acme_live_key' },
      { token: lookalike, type: 'acme_live_key' },
      { token: s.key, type: 'acme_live_key' },
    ]);
    const response = await s.signed(body);
    expect((await response.json()).map((r: { label: string }) => r.label)).toEqual(['false_positive', 'false_positive', 'true_positive']);
    const only = await setup();
    const answer = await only.signed(only.alert(stranger));
    expect(await answer.json()).toEqual([{ token_raw: stranger, token_type: 'acme_live_key', label: 'false_positive' }]);
    expect(await live(only.a, only.key)).toBe(true);
    expect(only.events).toEqual([]);
  });

  it('a key already revoked is a true_positive with nothing left to do', async () => {
    const s = await setup();
    expect((await s.signed(s.alert(s.key))).status).toBe(200);
    const again = await s.signed(JSON.stringify([{ token: s.key, type: 'acme_live_key', url: 'https://github.com/o/r/issues/1' }]));
    expect(await again.json()).toEqual([{ token_raw: s.key, token_type: 'acme_live_key', label: 'true_positive' }]);
    expect(s.events).toHaveLength(1);
  });

  it('refuses a tampered body, a wrong signature and a malformed signature, revoking nothing', async () => {
    const s = await setup();
    const body = s.alert(s.key);
    const signature = await s.github.sign(body);
    const tampered = await s.post(body.replace('content', 'commit!'), { 'github-public-key-identifier': 'k1', 'github-public-key-signature': signature });
    expect([tampered.status, (await problem(tampered)).field]).toEqual([400, 'github-public-key-signature']);
    const other = await githubAlertSigner();
    const wrong = await s.post(body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await other.sign(body) });
    expect([wrong.status, (await problem(wrong)).code]).toEqual([400, 'invalid_request']);
    for (const bad of ['', 'not base64!', btoa('junk'), signature.slice(0, -8)]) {
      const response = await s.post(body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': bad });
      expect([response.status, (await problem(response)).field]).toEqual([400, 'github-public-key-signature']);
    }
    expect(await live(s.a, s.key)).toBe(true);
    expect(s.events).toEqual([]);
  });

  it('refuses an unknown key id after a refresh made for it, asks for a retry within minKeyRefreshSeconds of the last fetch, and never trusts an id it cannot fetch', async () => {
    let now = Date.parse('2026-11-28T12:00:00.000Z');
    const s = await setup({ clock: () => now }, () => now);
    expect((await s.signed('[]')).status).toBe(200);
    expect(s.fetches()).toBe(1);
    // Moments after a fetch: the id may be published since, so "retry", not a refusal.
    const soon = await s.signed(s.alert(s.key), 'k-forged');
    expect([soon.status, soon.headers.get('retry-after'), (await problem(soon)).code]).toEqual([503, '60', 'unavailable']);
    expect(s.fetches()).toBe(1);
    now += 60_000;
    const unknown = await s.signed(s.alert(s.key), 'k-forged');
    expect([unknown.status, (await problem(unknown)).field]).toEqual([400, 'github-public-key-identifier']);
    expect(s.fetches()).toBe(2); // refreshed once
    expect((await s.signed(s.alert(s.key), 'k-forged-2')).status).toBe(503);
    expect(s.fetches()).toBe(2); // not again within minKeyRefreshSeconds
    const missing = await s.post(s.alert(s.key), { 'github-public-key-signature': await s.github.sign(s.alert(s.key)) });
    expect([missing.status, (await problem(missing)).field]).toEqual([400, 'github-public-key-identifier']);
    expect(await live(s.a, s.key)).toBe(true);
  });

  it('picks up a rotated GitHub key on its first alert once a fetch is allowed, and asks for a retry before', async () => {
    let now = Date.parse('2026-11-28T12:00:00.000Z');
    const s = await setup({ clock: () => now }, () => now);
    expect((await s.signed('[]')).status).toBe(200);
    const next = await githubAlertSigner();
    s.published.push({ key_identifier: 'k2', key: next.pem, is_current: true });
    const body = s.alert(s.key);
    const send = async () => s.post(body, { 'github-public-key-identifier': 'k2', 'github-public-key-signature': await next.sign(body) });
    now += 10_000;
    const early = await send();
    expect([early.status, early.headers.get('retry-after')]).toEqual([503, '50']);
    expect(await live(s.a, s.key)).toBe(true);
    now += 50_000;
    expect((await send()).status).toBe(200);
    expect(await live(s.a, s.key)).toBe(false);
  });

  it('refuses a replayed alert: the hook runs once', async () => {
    const s = await setup({ policy: 'mark' });
    const body = s.alert(s.key);
    expect((await s.signed(body)).status).toBe(200);
    const replay = await s.signed(body);
    expect([replay.status, (await problem(replay)).detail]).toEqual([400, 'This alert was already processed.']);
    expect(s.events).toHaveLength(1);
  });

  it('refuses oversized and malformed bodies with problems that quote no key', async () => {
    const s = await setup({ maxBodyBytes: 512 });
    const big = JSON.stringify(Array.from({ length: 20 }, () => ({ token: s.key, type: 'acme_live_key' })));
    const oversized = await s.signed(big);
    expect([oversized.status, oversized.headers.get('connection'), (await problem(oversized)).field]).toEqual([400, 'close', 'body']);
    for (const body of ['{', '{"token":"x"}', `[{"token":${JSON.stringify(s.key)}}]`, '[null]']) {
      const response = await s.signed(body);
      const text = JSON.stringify(await problem(response));
      expect(response.status).toBe(400);
      expect(text).not.toContain(s.key.slice(10, 20));
    }
    expect(await live(s.a, s.key)).toBe(true);
  });

  it('answers 503 when the signing keys cannot be fetched, and accepts the retry', async () => {
    const s = await setup();
    let down = true;
    const handler = createLeakAlertHandler({
      keyring: s.a,
      admin: s.admin,
      publicKeys: { fetch: async () => (down ? Promise.reject(new Error('ECONNREFUSED')) : s.published) },
      minKeyRefreshSeconds: 0,
    });
    const body = s.alert(s.key);
    const request = async () => handler(new Request(URL_, { method: 'POST', body, headers: { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await s.github.sign(body) } }));
    expect((await request()).status).toBe(503);
    down = false;
    expect((await request()).status).toBe(200);
    expect(await live(s.a, s.key)).toBe(false);
  });

  it('fetches the signing keys at most once per minKeyRefreshSeconds while the source fails, and tells GitHub to retry', async () => {
    let now = Date.parse('2026-11-28T12:00:00.000Z');
    const s = await setup({}, () => now);
    let down = true;
    let fetches = 0;
    const handler = createLeakAlertHandler({
      keyring: s.a,
      admin: s.admin,
      clock: () => now,
      publicKeys: { fetch: async () => (fetches++, down ? Promise.reject(new Error('403 rate limited')) : s.published) },
    });
    const send = async (body: string, id: string, signature: string) =>
      handler(new Request(URL_, { method: 'POST', body, headers: { 'github-public-key-identifier': id, 'github-public-key-signature': signature } }));
    const body = s.alert(s.key);
    const signature = await s.github.sign(body);
    const forged: Response[] = [];
    for (let i = 0; i < 50; i++) forged.push(await send(body, `k-${i}-${Math.random().toString(36).slice(2)}`, signature));
    expect(fetches).toBeLessThanOrEqual(1);
    for (const response of forged) {
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect((await problem(response)).code).toBe('unavailable');
    }
    // GitHub's own alert during the failure: 503 too, and still no fetch.
    expect((await send(body, 'k1', signature)).status).toBe(503);
    expect(fetches).toBe(1);
    now += 30_000;
    expect((await send(body, 'k-forged', signature)).status).toBe(503);
    expect(fetches).toBe(1);
    // The window has passed: one fetch, which succeeds, and GitHub's retry is processed.
    now += 30_000;
    down = false;
    expect((await send(body, 'k1', signature)).status).toBe(200);
    expect(fetches).toBe(2);
    expect(await live(s.a, s.key)).toBe(false);
  });

  it('after a good load, a failed refresh for an unknown id is rate-limited too, and known ids still verify', async () => {
    let now = Date.parse('2026-11-28T12:00:00.000Z');
    const s = await setup({}, () => now);
    let down = false;
    let fetches = 0;
    const handler = createLeakAlertHandler({
      keyring: s.a,
      admin: s.admin,
      clock: () => now,
      publicKeys: { fetch: async () => (fetches++, down ? Promise.reject(new Error('ECONNRESET')) : s.published) },
    });
    const send = async (body: string, id: string) =>
      handler(new Request(URL_, { method: 'POST', body, headers: { 'github-public-key-identifier': id, 'github-public-key-signature': await s.github.sign(body) } }));
    expect((await send('[]', 'k1')).status).toBe(200);
    expect(fetches).toBe(1);
    down = true;
    now += 60_000;
    const first = await send('[1]', 'k-rotated');
    expect(first.status).toBe(503); // the id may be GitHub's new key: retry, do not refuse
    expect(fetches).toBe(2);
    const more = await Promise.all(Array.from({ length: 50 }, (_, i) => send('[2]', `k-forged-${i}`)));
    expect(more.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 503));
    expect(fetches).toBe(2);
    expect((await send(s.alert(s.key), 'k1')).status).toBe(200); // the cached key still verifies
    expect(fetches).toBe(2);
  });

  it('checks its options', async () => {
    const s = await setup();
    expect(() => createLeakAlertHandler({ keyring: s.a, admin: s.admin, publicKeys: {} as never })).toThrow(ConfigError);
    expect(() => createLeakAlertHandler({ keyring: s.a, admin: s.admin, publicKeys: 'x', policy: 'delete' as never })).toThrow(/policy/);
    expect(() => createLeakAlertHandler({ keyring: s.a, admin: s.admin, publicKeys: 'x', maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    expect(() => createLeakAlertHandler({ keyring: s.a, admin: s.admin, publicKeys: 'x', maxTokens: 0 })).toThrow(/maxTokens/);
    expect(() => createLeakAlertHandler({ keyring: s.a, admin: s.admin, publicKeys: 'x', maxConcurrentAlerts: 1.5 })).toThrow(/maxConcurrentAlerts/);
    expect(() => createLeakAlertHandler({ keyring: s.a, admin: s.admin, publicKeys: 'x', crypto: {} as never })).toThrow(/crypto/);
  });

  it('digests bodies (against replays) with the crypto provider it is given', async () => {
    const digested: string[] = [];
    const provider: CryptoProvider = { ...nodeCrypto, sha256: (data: string) => (digested.push(data), nodeCrypto.sha256(data)) };
    const s = await setup({ crypto: provider, policy: 'mark' });
    const body = s.alert(s.key);
    expect((await s.signed(body)).status).toBe(200);
    expect(digested).toEqual([body]);
    expect((await s.signed(body)).status).toBe(400); // the replay is still refused
  });
});

describe('createLeakAlertHandler: the leak on the key record', () => {
  const FOUND = 'https://github.com/o/r/blob/abc/config.yml';

  it.each(['revoke', 'mark'] as const)("policy '%s' records leakedAt and the URL before it answers", async (policy) => {
    const s = await setup({ policy });
    const id = (await s.a.verify(s.key)).id;
    expect(await s.admin.get(id)).toMatchObject({ leakedAt: null, leakUrl: null });
    const before = Date.now();
    const response = await s.signed(s.alert(s.key));
    expect(response.status).toBe(200);
    const record = await s.admin.get(id);
    expect(record.leakedAt?.getTime()).toBeGreaterThanOrEqual(before);
    expect(record.leakedAt?.getTime()).toBeLessThanOrEqual(Date.now());
    expect(record.leakUrl).toBe(FOUND);
    expect(record.revokedAt === null).toBe(policy === 'mark');
    expect(JSON.parse(JSON.stringify(record))).toMatchObject({ leakedAt: record.leakedAt?.toISOString(), leakUrl: FOUND });
    expect(s.events.map((e) => [e.action, e.leakUrl])).toEqual([[policy === 'revoke' ? 'revoked' : 'marked', FOUND]]);
  });

  it("a key reported again keeps its first leakedAt and URL (policy 'mark'); the hook sees each report", async () => {
    let now = Date.parse('2026-11-26T12:00:00.000Z');
    const s = await setup({ policy: 'mark' }, () => now);
    const id = (await s.a.verify(s.key)).id;
    expect((await s.signed(s.alert(s.key))).status).toBe(200);
    const first = await s.admin.get(id);
    expect(first.leakedAt?.toISOString()).toBe('2026-11-26T12:00:00.000Z');
    now += 60_000;
    const again = JSON.stringify([{ token: s.key, type: 'acme_live_key', url: 'https://github.com/o/r/issues/9' }]);
    expect((await s.signed(again)).status).toBe(200);
    const second = await s.admin.get(id);
    expect([second.leakedAt, second.leakUrl]).toEqual([first.leakedAt, FOUND]);
    expect(s.events.map((e) => e.leakUrl)).toEqual([FOUND, 'https://github.com/o/r/issues/9']);
  });

  it('records the leak without a URL when the alert has none or one that is not http(s)', async () => {
    for (const url of [undefined, 'javascript:alert(1)', 'not a url', `https://github.com/${'x/'.repeat(1100)}`]) {
      const s = await setup({ policy: 'mark' });
      const id = (await s.a.verify(s.key)).id;
      const body = JSON.stringify([{ token: s.key, type: 'acme_live_key', ...(url === undefined ? {} : { url }) }]);
      expect((await s.signed(body)).status).toBe(200);
      const record = await s.admin.get(id);
      expect([record.leakedAt === null, record.leakUrl]).toEqual([false, null]);
    }
  });

  it('refused alerts and tokens it never issued record nothing', async () => {
    const s = await setup({ policy: 'mark' });
    const id = (await s.a.verify(s.key)).id;
    const body = s.alert(s.key);
    const signature = await s.github.sign(body);
    const other = await githubAlertSigner();
    const refused = [
      await s.post(body.replace('content', 'commit!'), { 'github-public-key-identifier': 'k1', 'github-public-key-signature': signature }),
      await s.post(body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await other.sign(body) }),
      await s.post(body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'not base64!' }),
      await s.signed(body, 'k-forged'),
      await s.post(body, { 'github-public-key-signature': signature }),
    ];
    expect(refused.map((r) => r.status)).toEqual([400, 400, 400, 503, 400]); // an unknown key id moments after a fetch: retry later
    const stranger = await s.signed(s.alert(generateKey('acme_live')));
    expect(await stranger.json()).toEqual([{ token_raw: expect.any(String), token_type: 'acme_live_key', label: 'false_positive' }]);
    expect(await s.admin.get(id)).toMatchObject({ leakedAt: null, leakUrl: null });
    expect(s.events).toEqual([]);
  });

  it('needs a key store that records leaks', async () => {
    const { recordLeak: _, ...withoutLeaks } = createMemoryKeyStore();
    const keyring = createKeyring({ store: withoutLeaks as KeyStore, prefix: 'acme_live', lastUsed: false });
    expect(() => createLeakAlertHandler({ keyring, admin: createKeyAdmin(keyring), publicKeys: 'https://keys.example/' })).toThrow(/KeyStore\.recordLeak/);
  });

  it('the stored URL never holds 8 characters of the reported key in a row, whatever the alert says', async () => {
    const s = await setup({ policy: 'mark' });
    const pieces = fc.record({
      start: fc.nat({ max: 30 }),
      length: fc.integer({ min: 8, max: 38 }),
      where: fc.constantFrom('path', 'query', 'host', 'fragment', 'whole'),
      glue: fc.constantFrom('', '-', '_', '.', '%2F'),
    });
    await fc.assert(
      fc.asyncProperty(pieces, async ({ start, length, where, glue }) => {
        const { key, record } = await s.admin.issue({ name: 'prop', scopes: [] });
        const secret = key.slice(key.lastIndexOf('_') + 1);
        const piece = where === 'whole' ? key : secret.slice(start, start + length);
        const url =
          where === 'host' ? `https://${piece}${glue}.example.com/x`
          : where === 'query' ? `https://github.com/o/r?k=${glue}${piece}`
          : where === 'fragment' ? `https://github.com/o/r#${piece}${glue}`
          : `https://github.com/o/r/blob/main/${glue}${piece}${glue}.env`;
        const body = JSON.stringify([{ token: key, type: 'acme_live_key', url }]);
        expect((await s.signed(body)).status).toBe(200);
        const stored = await s.admin.get(record.id);
        expect(stored.leakedAt).not.toBeNull();
        if (stored.leakUrl !== null) expect(secretLeak(stored.leakUrl, [key])).toBeUndefined();
        expect(secretLeak(JSON.stringify(stored), [key])).toBeUndefined();
      }),
      { numRuns: 40 },
    );
  });
});

describe('createLeakAlertHandler: bounded work per alert', () => {
  const entry = (token: string, extra: Record<string, string> = {}) => ({ token, type: 'acme_live_key', ...extra });

  it('looks each distinct token up once: 200 copies of a live key and 56 of a stranger are one record, one revocation, one onLeak and one log line', async () => {
    const s = await setup();
    const stranger = generateKey('acme_live');
    const body = JSON.stringify([...Array.from({ length: 200 }, () => entry(s.key)), ...Array.from({ length: 56 }, () => entry(stranger))]);
    const lookupsBefore = s.calls.findByDigest;
    const response = await s.signed(body);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { token_raw: string; label: string }[];
    expect(answer).toHaveLength(256);
    expect(answer.slice(0, 200).every((a) => a.token_raw === s.key && a.label === 'true_positive')).toBe(true);
    expect(answer.slice(200).every((a) => a.token_raw === stranger && a.label === 'false_positive')).toBe(true);
    expect(s.calls.findByDigest - lookupsBefore).toBeLessThanOrEqual(1); // the live key is cached; the stranger looked up once
    expect([s.calls.recordLeak, s.calls.revoke, s.events.length, s.logs.length]).toEqual([1, 1, 1, 1]);
    expect(await live(s.a, s.key)).toBe(false);
  });

  it('refuses a body of more than maxTokens tokens (default 256) with a 400 naming the maximum, before any lookup', async () => {
    const s = await setup();
    const body = JSON.stringify(Array.from({ length: 257 }, () => entry(generateKey('acme_live'))));
    const lookupsBefore = s.calls.findByDigest;
    const response = await s.signed(body);
    const refusal = await problem(response);
    expect([response.status, refusal.code, refusal.field, refusal.max_tokens]).toEqual([400, 'invalid_request', 'body', 256]);
    expect(s.calls.findByDigest).toBe(lookupsBefore);
    const small = await setup({ maxTokens: 3 });
    const four = await small.signed(JSON.stringify([entry(small.key), entry('a'), entry('b'), entry('c')]));
    expect([four.status, (await problem(four)).max_tokens]).toEqual([400, 3]);
    expect(await live(small.a, small.key)).toBe(true);
    expect((await small.signed(JSON.stringify([entry(small.key), entry('a'), entry('b')]))).status).toBe(200);
  });

  it('looks tokens up at most 4 at a time', async () => {
    const s = await setup({}, Date.now, 2);
    const body = JSON.stringify(Array.from({ length: 100 }, () => entry(generateKey('acme_live'))));
    const response = await s.signed(body);
    expect(response.status).toBe(200);
    expect(s.calls.maxLookupsAtOnce).toBeGreaterThanOrEqual(1);
    expect(s.calls.maxLookupsAtOnce).toBeLessThanOrEqual(4);
  });

  it('processes at most maxConcurrentAlerts alerts at once; more are answered 503 with Retry-After, unread', async () => {
    const s = await setup({ maxConcurrentAlerts: 2 }, Date.now, 5);
    expect((await s.signed('[]')).status).toBe(200); // the signing keys are loaded
    const bodies = Array.from({ length: 6 }, (_, i) => JSON.stringify([entry(generateKey('acme_live'), { source: String(i) })]));
    const signatures = await Promise.all(bodies.map((body) => s.github.sign(body)));
    const responses = await Promise.all(
      bodies.map((body, i) => s.post(body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': signatures[i]! })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 503, 503, 503, 503]);
    for (const r of responses.filter((r) => r.status === 503)) expect(r.headers.get('retry-after')).toBe('1');
    // Slots are given back: the refused alerts go through when sent again.
    for (const [i, body] of bodies.entries()) {
      if (responses[i]!.status === 503) expect((await s.post(body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': signatures[i]! })).status).toBe(200);
    }
  });

  it('reads no body before the signature header and the key id are known good', async () => {
    const s = await setup();
    expect((await s.signed('[]')).status).toBe(200);
    const streamed = (headers: Record<string, string>) => {
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++;
          controller.enqueue(new TextEncoder().encode('['.repeat(1024)));
        },
      }, { highWaterMark: 0 }); // nothing is pulled until someone reads
      const request = new Request(URL_, { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
      return { request, pulled: () => pulled };
    };
    const signature = await s.github.sign('[]');
    for (const headers of [
      { 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'not base64!' },
      { 'github-public-key-signature': signature },
      { 'github-public-key-identifier': 'k-forged', 'github-public-key-signature': signature },
    ]) {
      const { request, pulled } = streamed(headers);
      const response = await s.handler(request);
      expect([400, 503]).toContain(response.status);
      expect(pulled()).toBe(0);
    }
  });

  it('caps the body at 256 KiB by default', async () => {
    const s = await setup();
    const url = `https://github.com/o/r/blob/main/${'a'.repeat(1900)}`;
    const entries = Array.from({ length: 140 }, () => entry(generateKey('acme_live'), { url }));
    const body = JSON.stringify(entries);
    expect(body.length).toBeGreaterThan(262_144);
    const response = await s.signed(body);
    expect([response.status, (await problem(response)).field]).toEqual([400, 'body']);
    expect((await s.signed(JSON.stringify(entries.slice(0, 100)))).status).toBe(200);
  });

  it('refuses a body with a member named twice (JSON.parse would keep the last) as malformed', async () => {
    const s = await setup();
    const stranger = generateKey('acme_live');
    for (const body of [
      `[{"token":${JSON.stringify(stranger)},"token":${JSON.stringify(s.key)},"type":"acme_live_key"}]`,
      `[{"token":${JSON.stringify(s.key)},"type":"acme_live_key","type":"other"}]`,
      `[{"token":${JSON.stringify(s.key)},"type":"acme_live_key","url":"https://github.com/a","ur\u006c":"https://github.com/b"}]`,
    ]) {
      const response = await s.signed(body);
      const refusal = await problem(response);
      expect([response.status, refusal.code, refusal.field]).toEqual([400, 'invalid_request', 'body']);
      expect(JSON.stringify(refusal)).not.toContain(s.key.slice(10, 20));
    }
    expect(await live(s.a, s.key)).toBe(true);
    expect([s.calls.recordLeak, s.events.length]).toEqual([0, 0]);
  });

  it('logs one line per alert with counts and the leaked keys by id and last four characters', async () => {
    const s = await setup({ policy: 'mark' });
    const more = await Promise.all([s.admin.issue({ name: 'b', scopes: [] }), s.admin.issue({ name: 'c', scopes: [] })]);
    const stranger = generateKey('acme_live');
    const tokens = [s.key, s.key, more[0].key, more[1].key, stranger, 'not-a-key', more[1].key];
    expect((await s.signed(JSON.stringify(tokens.map((t) => entry(t)))))).toMatchObject({ status: 200 });
    expect(s.logs).toHaveLength(1);
    const [fields, message, level] = s.logs[0] as [Record<string, unknown>, string, string];
    expect(level).toBe('warn');
    expect(message).toBe('secret scanning alert processed');
    const ids = [(await s.a.verify(s.key)).id, more[0].record.id, more[1].record.id];
    expect(fields).toEqual({
      tokens: 7,
      distinct: 5,
      leaked: ids.map((keyId, i) => ({ keyId, last4: [s.key, more[0].key, more[1].key][i]!.slice(-4) })),
      alreadyEnded: 0,
      falsePositives: 2,
      policy: 'mark',
    });
    expect(JSON.stringify(s.logs)).not.toContain(stranger.slice(10, 30));
    const quiet = await setup();
    expect((await quiet.signed(JSON.stringify([entry(stranger)]))).status).toBe(200);
    expect(quiet.logs).toEqual([[{ tokens: 1, distinct: 1, leaked: [], alreadyEnded: 0, falsePositives: 1, policy: 'revoke' }, 'secret scanning alert processed']]);
  });
});
