import { describe, expect, it } from 'vitest';
import { ConfigError, KeysetError } from '../errors.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { createMemoryAuditStore } from './memory-audit-store.ts';
import { createOwnerAdmin } from '../admin/owner-admin.ts';
import type { AuditEntry } from './audit-store.ts';
import { listAudit } from './list-audit.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function setup() {
  let now = T0;
  const audit = createMemoryAuditStore();
  const store = createMemoryKeyStore({ audit });
  const keyring = createKeyring({ store, prefix: 'acme_test', clock: () => now, cache: false, lastUsed: false });
  return {
    store,
    audit,
    keyring,
    keys: createKeyAdmin(keyring, { actor: 'billing-job' }),
    owners: createOwnerAdmin(keyring, { actor: 'billing-job' }),
    tick: (ms = 1000) => void (now += ms),
  };
}

const code = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error instanceof KeysetError ? error.code : String(error)),
  );

describe('the audit log of createKeyAdmin and createOwnerAdmin', () => {
  it('records every admin action exactly once, with its actor, request id and the public fields that changed', async () => {
    const { audit, keys, owners, tick } = setup();
    const entries = async (): Promise<AuditEntry[]> => (await audit.list({ take: 100 })).entries;
    /** Runs `action` and returns the one entry it added (failing when it added none or several). */
    const one = async (action: () => Promise<unknown>): Promise<AuditEntry> => {
      tick();
      const before = (await entries()).length;
      await action();
      const after = await entries();
      expect(after).toHaveLength(before + 1);
      return after[0]!;
    };
    const alice = { actor: 'alice', requestId: 'req_1' };

    const created = await one(() => owners.create({ id: 'cus_42', metadata: { plan: 'pro' } }, alice));
    expect(created).toEqual({
      id: expect.stringMatching(/^aud_[0-9A-Za-z]{22}$/),
      at: new Date(T0 + 1000),
      actor: 'alice',
      action: 'owner.created',
      target: { type: 'owner', id: 'cus_42' },
      changes: { metadata: { before: null, after: { plan: 'pro' } } },
      requestId: 'req_1',
    });

    let id = '';
    const issued = await one(async () => {
      id = (await keys.issue({ name: 'ci', scopes: ['orders:read'], ownerId: 'cus_42', metadata: { team: 'a' } })).record.id;
    });
    expect(issued).toMatchObject({ actor: 'billing-job', action: 'key.issued', target: { type: 'key', id }, requestId: null });
    expect(issued.changes).toEqual({
      name: { before: null, after: 'ci' },
      scopes: { before: null, after: ['orders:read'] },
      environment: { before: null, after: 'acme_test' },
      metadata: { before: null, after: { team: 'a' } },
      ownerId: { before: null, after: 'cus_42' },
    });

    const updated = await one(() => keys.update(id, { metadata: { team: 'b' }, ipAllowlist: ['10.0.0.0/8'] }, { requestId: 'req_2' }));
    expect(updated).toMatchObject({ actor: 'billing-job', action: 'key.updated', requestId: 'req_2' });
    expect(updated.changes).toEqual({ metadata: { before: { team: 'a' }, after: { team: 'b' } }, ipAllowlist: { before: null, after: ['10.0.0.0/8'] } });

    const limits = await one(() => keys.updateLimits(id, { rateLimits: [{ name: 'minute', limit: 60, windowSeconds: 60 }] }, alice));
    expect(limits).toMatchObject({ action: 'key.limits_updated', actor: 'alice' });
    expect(limits.changes).toEqual({ rateLimits: { before: null, after: [{ name: 'minute', limit: 60, windowSeconds: 60 }] } });

    const rotated = await one(() => keys.rotate(id, { overlapSeconds: 60 }, alice));
    expect(rotated).toMatchObject({ action: 'key.rotated', target: { type: 'key', id } });
    const rotatedAt = new Date(T0 + 5000).toISOString();
    expect(rotated.changes).toEqual({
      secrets: {
        before: [{ createdAt: new Date(T0 + 2000).toISOString(), expiresAt: null }],
        after: [
          { createdAt: rotatedAt, expiresAt: null },
          { createdAt: new Date(T0 + 2000).toISOString(), expiresAt: new Date(T0 + 5000 + 60_000).toISOString() },
        ],
      },
    });

    const leaked = await one(() => keys.recordLeak(id, { url: 'https://example.com/leak' }, { actor: 'secret-scanning' }));
    expect(leaked).toMatchObject({ action: 'key.leaked', actor: 'secret-scanning' });
    expect(leaked.changes).toEqual({
      leakedAt: { before: null, after: new Date(T0 + 6000).toISOString() },
      leakUrl: { before: null, after: 'https://example.com/leak' },
    });
    // A second report keeps the first (KeyStore.recordLeak): an entry, and nothing changed.
    expect((await one(() => keys.recordLeak(id, { url: 'https://example.com/other' }, { actor: 'secret-scanning' }))).changes).toEqual({});

    const revoked = await one(() => keys.revoke(id, alice));
    expect(revoked.changes).toEqual({ revokedAt: { before: null, after: new Date(T0 + 8000).toISOString() } });
    expect((await one(() => keys.revoke(id, alice))).changes).toEqual({});

    const ownerUpdated = await one(() => owners.update('cus_42', { metadata: { plan: 'team' } }, alice));
    expect(ownerUpdated).toMatchObject({ action: 'owner.updated', changes: { metadata: { before: { plan: 'pro' }, after: { plan: 'team' } } } });
    const disabled = await one(() => owners.update('cus_42', { disabled: true }, alice));
    expect(disabled).toMatchObject({ action: 'owner.disabled', changes: { disabledAt: { before: null, after: new Date(T0 + 11_000).toISOString() } } });
    const enabled = await one(() => owners.update('cus_42', { disabled: false }, alice));
    expect(enabled).toMatchObject({ action: 'owner.updated', changes: { disabledAt: { before: new Date(T0 + 11_000).toISOString(), after: null } } });
    const deleted = await one(() => owners.delete('cus_42', alice));
    expect(deleted).toMatchObject({ action: 'owner.deleted', target: { type: 'owner', id: 'cus_42' }, changes: { metadata: { before: { plan: 'team' }, after: null } } });

    // Newest first, one per call above.
    expect((await entries()).map((e) => e.action)).toEqual([
      'owner.deleted',
      'owner.updated',
      'owner.disabled',
      'owner.updated',
      'key.revoked',
      'key.revoked',
      'key.leaked',
      'key.leaked',
      'key.rotated',
      'key.limits_updated',
      'key.updated',
      'key.issued',
      'owner.created',
    ]);
  });

  it('writes no entry for a call refused or naming an unknown record', async () => {
    const { audit, keys, owners } = setup();
    const { record } = await keys.issue({ name: 'ci', scopes: ['a'] });
    await keys.revoke(record.id);
    const count = async (): Promise<number> => (await audit.list({ take: 100 })).entries.length;
    const before = await count();
    expect(await code(keys.revoke('key_0000000000000000000000'))).toBe('not_found');
    expect(await code(keys.update('key_0000000000000000000000', { metadata: {} }))).toBe('not_found');
    expect(await code(keys.rotate(record.id, { overlapSeconds: 0 }))).toBe('invalid_request'); // revoked
    expect(await code(keys.issue({ name: '', scopes: ['a'] }))).toBe('invalid_request');
    expect(await code(owners.update('nobody', { metadata: {} }))).toBe('not_found');
    expect(await code(owners.delete('nobody'))).toBe('not_found');
    await owners.create({ id: 'taken' });
    expect(await code(owners.create({ id: 'taken' }))).toBe('invalid_request');
    expect(await count()).toBe(before + 1);
  });

  it('checks the actor and the request id: a ConfigError when the admin is made, a 400 on a call, before anything changes', async () => {
    const { keyring, store, audit, keys } = setup();
    expect(() => createKeyAdmin(keyring, { actor: '' })).toThrow(ConfigError);
    expect(() => createOwnerAdmin(keyring, { actor: 'a\nb' })).toThrow(ConfigError);
    expect(() => createKeyAdmin(keyring, { actor: 'x'.repeat(129) })).toThrow(ConfigError);
    expect(() => createKeyAdmin(keyring, { actr: 'typo' } as never)).toThrow(/actor/);
    expect(() => createMemoryKeyStore({ audit: {} as never })).toThrow(ConfigError);
    expect(await code(keys.issue({ name: 'ci', scopes: ['a'] }, { actor: '\u0000' }))).toBe('invalid_request');
    expect(await code(keys.issue({ name: 'ci', scopes: ['a'] }, { requestId: 'has space' }))).toBe('invalid_request');
    expect(await code(keys.issue({ name: 'ci', scopes: ['a'] }, { requestId: 'x'.repeat(129) }))).toBe('invalid_request');
    expect((await audit.list({ take: 10 })).entries).toEqual([]);
    expect((await store.listIdentities({ take: 10 })).keys).toEqual([]);
  });

  it('pages through listAudit with its filters, and refuses bad filters and foreign positions', async () => {
    const { audit, keys, tick } = setup();
    for (let n = 0; n < 5; n++) {
      tick();
      await keys.issue({ name: `k${n}`, scopes: ['a'] }, { actor: n % 2 === 0 ? 'even' : 'odd' });
    }
    const first = await listAudit(audit, { mode: 'cursor', limit: 2 }, { actor: 'even' });
    // `take` (limit + 1) records, as Paginator.page() expects them: it trims and builds the cursors.
    expect(first.records.map((e) => e.actor)).toEqual(['even', 'even', 'even']);
    expect(first.hasMore).toBe(true);
    const last = first.records[1]!;
    const second = await listAudit(audit, { mode: 'cursor', limit: 2, after: [last.at, last.id] }, { actor: 'even' });
    expect(second.records.map((e) => e.id)).toEqual([first.records[2]!.id]);
    expect(second.hasMore).toBe(false);
    const offset = await listAudit(audit, { mode: 'offset', limit: 2, offset: 4 });
    expect(offset).toMatchObject({ hasMore: false, total: 5 });
    expect(await code(listAudit(audit, { mode: 'cursor', limit: 2 }, { action: 'key.frobbed' as never }))).toBe('invalid_request');
    expect(await code(listAudit(audit, { mode: 'cursor', limit: 2 }, { from: new Date(T0 + 1), to: new Date(T0) }))).toBe('invalid_request');
    expect(await code(listAudit(audit, { mode: 'cursor', limit: 2, after: { nope: true } }))).toBe('invalid_cursor');
  });
});
