/**
 * The key model beyond name and scopes: environments (several prefixes in one keyring),
 * metadata, IP allowlists and `update`, through the keyring and the guard adapters call.
 */
import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { ConfigError, KeysetError, toProblem } from '../errors.ts';
import { createApiKeyGuard } from './api-key-guard.ts';
import { keyPattern, parseKey } from '../keys/key-format.ts';
import { createKeyring, type KeyChangeEvent } from './keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const ENVIRONMENTS = { live: 'acme_live', test: 'acme_test' } as const;

function setup() {
  const warnings: Record<string, unknown>[] = [];
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: ENVIRONMENTS, lastUsed: false, logger: { warn: (f) => void warnings.push(f) } });
  return { keyring, warnings };
}

const refusal = (promise: Promise<unknown>): Promise<KeysetError> => rejectionOf(promise, KeysetError);

describe('environments: one keyring, several prefixes', () => {
  it('issues keys of the first environment by default and of the one asked for, and verifies both', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    expect([keyring.prefix, keyring.prefixes, keyring.environments]).toEqual(['acme_live', ['acme_live', 'acme_test'], ENVIRONMENTS]);
    const live = await admin.issue({ name: 'prod', scopes: [] });
    const test = await admin.issue({ name: 'ci', scopes: [], environment: 'test' });
    expect(live.key.startsWith('acme_live_')).toBe(true);
    expect(test.key.startsWith('acme_test_')).toBe(true);
    expect([live.record.environment, test.record.environment]).toEqual(['live', 'test']);
    expect((await keyring.verify(live.key)).environment).toBe('live');
    expect((await keyring.verify(test.key)).environment).toBe('test');
    expect((await admin.get(test.record.id)).environment).toBe('test');
  });

  it('rotation keeps the environment', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const { record } = await admin.issue({ name: 'ci', scopes: [], environment: 'test' });
    const rotated = await admin.rotate(record.id, { overlapSeconds: 0 });
    expect(rotated.key.startsWith('acme_test_')).toBe(true);
    expect((await keyring.verify(rotated.key)).environment).toBe('test');
  });

  it('refuses an unknown environment with 400 naming the field and the choices', async () => {
    const { keyring } = setup();
    const error = await refusal(createKeyAdmin(keyring).issue({ name: 'x', scopes: [], environment: 'staging' }));
    expect([error.code, error.extensions['field'], error.detail]).toEqual(['invalid_request', 'environment', '`environment` must be one of: live, test.']);
  });

  it('refuses keys of a prefix it was not given, as malformed, without a store lookup', async () => {
    const other = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_dev', lastUsed: false });
    const { key } = await createKeyAdmin(other).issue({ name: 'x', scopes: [] });
    const { keyring } = setup();
    const error = await refusal(keyring.verify(key));
    expect([error.code, (error as KeysetError & { reason: string }).reason]).toEqual(['invalid_api_key', 'malformed']);
  });

  it('refuses a key of EVERY configured prefix in the query string', async () => {
    const { keyring } = setup();
    const { key } = await createKeyAdmin(keyring).issue({ name: 'ci', scopes: [], environment: 'test' });
    const error = await refusal(keyring.authenticate({ authorization: `ApiKey ${key}`, url: `/x?q=${key}` }));
    expect(error.code).toBe('api_key_in_query');
  });

  it('keyPattern finds keys of every prefix for secret scanners, and only whole keys', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const live = (await admin.issue({ name: 'a', scopes: [] })).key;
    const test = (await admin.issue({ name: 'b', scopes: [], environment: 'test' })).key;
    const pattern = new RegExp(keyPattern(keyring.prefixes), 'g');
    const found = `config: ${live}\nother=${test};x${live}y acme_dev_${live.slice(10)}`.match(pattern);
    expect(found).toEqual([live, test]);
    expect(found?.every((k) => keyring.prefixes.some((p) => parseKey(k, p).ok))).toBe(true);
  });

  it('validates environment names and refuses a prefix given twice', () => {
    const store = createMemoryKeyStore();
    expect(() => createKeyring({ store, prefix: { Live: 'acme_live' } })).toThrow(ConfigError);
    expect(() => createKeyring({ store, prefix: { live: 'acme_live', prod: 'acme_live' } })).toThrow(/two environments/);
    expect(() => createKeyring({ store, prefix: {} })).toThrow(/at least one/);
    expect(() => createKeyring({ store, prefix: { live: 'Acme' } })).toThrow(/prefix must match/);
  });
});

describe('metadata', () => {
  it('is returned by verify, get, list and JSON, and survives a rotation', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const metadata = { customerId: 'cus_42', plan: { tier: 'pro', seats: 5 } };
    const { key, record } = await admin.issue({ name: 'svc', scopes: [], metadata });
    expect(record.metadata).toEqual(metadata);
    expect((await keyring.verify(key)).metadata).toEqual(metadata);
    expect(JSON.parse(JSON.stringify(await keyring.verify(key))).metadata).toEqual(metadata);
    expect((await admin.list({ mode: 'cursor', limit: 5 })).records[0]?.metadata).toEqual(metadata);
    const rotated = await admin.rotate(record.id, { overlapSeconds: 0 });
    expect((await keyring.verify(rotated.key)).metadata).toEqual(metadata);
  });

  it('cannot be changed through a verified key shared by requests', async () => {
    const { keyring } = setup();
    const { key } = await createKeyAdmin(keyring).issue({ name: 'svc', scopes: [], metadata: { plan: { tier: 'pro' } } });
    const first = await keyring.verify(key);
    expect(() => {
      (first.metadata['plan'] as Record<string, unknown>)['tier'] = 'free';
    }).toThrow(TypeError);
    expect((await keyring.verify(key)).metadata).toEqual({ plan: { tier: 'pro' } });
  });

  it('refuses bad metadata before touching the store (400 naming `metadata`)', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const error = await refusal(admin.issue({ name: 'svc', scopes: [], metadata: { big: 'x'.repeat(5000) } }));
    expect(toProblem(error).body).toMatchObject({ status: 400, code: 'invalid_request', field: 'metadata' });
    expect((await admin.list({ mode: 'offset', limit: 5 })).total).toBe(0);
  });
});

describe('update', () => {
  it('replaces metadata and allowlist, evicts cached results and tells listeners before it resolves', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const events: KeyChangeEvent[] = [];
    keyring.onChange((e) => void events.push(e));
    const { key, record } = await admin.issue({ name: 'svc', scopes: [], metadata: { a: 1 } });
    expect((await keyring.verify(key)).metadata).toEqual({ a: 1 }); // now cached
    const updated = await admin.update(record.id, { metadata: { a: 2 }, ipAllowlist: ['203.0.113.0/24'] });
    expect([updated.metadata, updated.ipAllowlist]).toEqual([{ a: 2 }, ['203.0.113.0/24']]);
    expect(events).toEqual([{ type: 'updated', id: record.id }]);
    const verified = await keyring.verify(key);
    expect([verified.metadata, verified.ipAllowlist]).toEqual([{ a: 2 }, ['203.0.113.0/24']]);
    const cleared = await admin.update(record.id, { ipAllowlist: null });
    expect([cleared.metadata, cleared.ipAllowlist]).toEqual([{ a: 2 }, null]);
  });

  it('answers not_found for an unknown id and 400 for an empty or bad change', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const { record } = await admin.issue({ name: 'svc', scopes: [] });
    expect((await refusal(admin.update('key_0000000000000000000000', { metadata: {} }))).code).toBe('not_found');
    expect((await refusal(admin.update(record.id, {}))).extensions['field']).toBe('body');
    expect((await refusal(admin.update(record.id, { ipAllowlist: ['nope'] }))).extensions['field']).toBe('ipAllowlist');
  });
});

describe('IP allowlist', () => {
  async function guarded(trustProxy?: Parameters<typeof createApiKeyGuard>[0]['trustProxy']) {
    const { keyring, warnings } = setup();
    const guard = createApiKeyGuard(trustProxy === undefined ? { keyring } : { keyring, trustProxy });
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'svc', scopes: ['a'], ipAllowlist: ['203.0.113.0/24', '2001:db8::/32', '203.0.113.9'] });
    return { keyring, guard, key, record, warnings };
  }

  it('is stored canonical and de-duplicated', async () => {
    const { record } = await guarded();
    expect(record.ipAllowlist).toEqual(['203.0.113.0/24', '2001:db8::/32', '203.0.113.9/32']);
  });

  it('lets a listed socket address through and refuses any other with 403 ip_not_allowed, before scopes', async () => {
    const { guard, key, warnings } = await guarded();
    const auth = { authorization: `ApiKey ${key}`, url: '/x' };
    expect((await guard.check({ ...auth, remoteAddress: '::ffff:203.0.113.7' })).clientAddress).toBe('203.0.113.7');
    expect((await guard.check({ ...auth, remoteAddress: '2001:db8:1::5' })).key.name).toBe('svc');
    const error = await refusal(guard.check({ ...auth, remoteAddress: '198.51.100.1' }, { scopes: ['not:granted'] }));
    expect(toProblem(error)).toMatchObject({ status: 403, body: { code: 'ip_not_allowed', title: 'IP address not allowed' } });
    expect(JSON.stringify(toProblem(error).body)).not.toContain('198.51.100.1');
    expect(warnings.at(-1)).toMatchObject({ reason: 'ip_not_allowed', clientAddress: '198.51.100.1', last4: key.slice(-4) });
    expect(JSON.stringify(warnings)).not.toContain(key);
  });

  it('refuses when the address is unknown (no socket address given)', async () => {
    const { guard, key } = await guarded();
    const error = await refusal(guard.check({ authorization: `ApiKey ${key}`, url: '/x' }));
    expect([error.code, error.detail]).toEqual(['ip_not_allowed', expect.stringMatching(/not known/)]);
  });

  it('ignores X-Forwarded-For unless a trusted proxy is configured', async () => {
    const plain = await guarded();
    const spoof = { authorization: `ApiKey ${plain.key}`, url: '/x', remoteAddress: '10.0.0.1', forwardedFor: '203.0.113.7' };
    expect((await refusal(plain.guard.check(spoof))).code).toBe('ip_not_allowed');
    const proxied = await guarded({ hops: 1 });
    const through = { authorization: `ApiKey ${proxied.key}`, url: '/x', remoteAddress: '10.0.0.1', forwardedFor: '198.51.100.1, 203.0.113.7' };
    expect((await proxied.guard.check(through)).clientAddress).toBe('203.0.113.7');
    const byCidr = await guarded({ cidrs: ['10.0.0.0/8'] });
    const twoProxies = { authorization: `ApiKey ${byCidr.key}`, url: '/x', remoteAddress: '10.0.0.1', forwardedFor: '203.0.113.7, 10.9.9.9' };
    expect((await byCidr.guard.check(twoProxies)).clientAddress).toBe('203.0.113.7');
  });

  it('keys without an allowlist work from any address, known or not', async () => {
    const { keyring } = setup();
    const guard = createApiKeyGuard({ keyring });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'open', scopes: [] });
    expect((await guard.check({ authorization: `ApiKey ${key}` })).clientAddress).toBeUndefined();
  });

  it.each([[[]], [['10.0.0.1/8']], [['example.com']], ['10.0.0.0/8'], [Array.from({ length: 101 }, (_, i) => `10.0.0.${i}`)]])(
    'refuses the allowlist %j with 400 naming `ipAllowlist`',
    async (ipAllowlist) => {
      const { keyring } = setup();
      const error = await refusal(createKeyAdmin(keyring).issue({ name: 'svc', scopes: [], ipAllowlist: ipAllowlist as string[] }));
      expect([error.status, error.extensions['field']]).toEqual([400, 'ipAllowlist']);
    },
  );
});
