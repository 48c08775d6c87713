/**
 * Whatever administrators send (names, metadata holding key-shaped strings, allowlists,
 * limits, leak URLs, request ids holding an issued key or 8 or more characters of one), no
 * audit entry ever holds an issued key, any part of its random body, a stored digest or the
 * pepper.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeysetError } from '../errors.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { generateKey } from '../keys/key-format.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { createOwnerAdmin } from '../admin/owner-admin.ts';
import { createMemoryAuditStore } from './memory-audit-store.ts';
import { secretLeak } from '@keyset/test-support';

const PEPPER = 'audit-property-pepper-0123456789abcdef';

const jsonLeaf = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(generateKey('acme_test')));
const metadata = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.oneof(jsonLeaf, fc.array(jsonLeaf, { maxLength: 3 })), { maxKeys: 5 });
/** The request id an operation is made with: none, a UUID one, or a cut of the last key issued (8 characters or more). */
const requestId = fc.oneof(fc.constant(null), fc.constant('uuid' as const), fc.record({ start: fc.nat({ max: 40 }), length: fc.integer({ min: 8, max: 64 }) }));
const operation = fc.oneof(
  fc.record({ kind: fc.constant('issue' as const), name: fc.string({ minLength: 1, maxLength: 60 }), metadata, ip: fc.boolean() }),
  fc.record({ kind: fc.constant('update' as const), metadata }),
  fc.record({ kind: fc.constant('rotate' as const), overlap: fc.integer({ min: 0, max: 3600 }) }),
  fc.record({ kind: fc.constant('limits' as const), limit: fc.integer({ min: 1, max: 1000 }), remaining: fc.integer({ min: 0, max: 10_000 }) }),
  fc.record({ kind: fc.constant('leak' as const), path: fc.webPath() }),
  fc.record({ kind: fc.constant('revoke' as const) }),
  fc.record({ kind: fc.constant('owner' as const), metadata, disable: fc.boolean() }),
);

/** Runs `call`; a refusal of bad input (a 400 or 404) is part of the game, anything else fails. */
async function tolerate(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof KeysetError) || !['invalid_request', 'not_found'].includes(error.code)) throw error;
  }
}

describe('audit entries hold no key text', () => {
  it('for any sequence of admin calls with any bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(operation, requestId), { minLength: 1, maxLength: 12 }), async (ops) => {
        const audit = createMemoryAuditStore();
        const store = createMemoryKeyStore({ audit });
        const keyring = createKeyring({ store, prefix: 'acme_test', pepper: PEPPER, cache: false, lastUsed: false });
        const keys = createKeyAdmin(keyring);
        const owners = createOwnerAdmin(keyring);
        const issued: string[] = [];
        const ids: string[] = [];
        let ownerN = 0;
        for (const [op, rid] of ops) {
          const id = ids.at(-1);
          const last = issued.at(-1);
          const ctx =
            rid === null || (rid !== 'uuid' && last === undefined)
              ? undefined
              : { requestId: rid === 'uuid' ? `req_${crypto.randomUUID()}` : last!.slice(Math.min(rid.start, last!.length - 8)).slice(0, rid.length) };
          if (op.kind === 'issue') {
            await tolerate(async () => {
              const { key, record } = await keys.issue({ name: op.name, scopes: ['orders:read'], metadata: op.metadata, ...(op.ip ? { ipAllowlist: ['10.0.0.0/8'] } : {}) }, ctx);
              issued.push(key);
              ids.push(record.id);
            });
          } else if (id === undefined) continue;
          else if (op.kind === 'update') await tolerate(() => keys.update(id, { metadata: op.metadata }, ctx));
          else if (op.kind === 'rotate') await tolerate(async () => void issued.push((await keys.rotate(id, { overlapSeconds: op.overlap }, ctx)).key));
          else if (op.kind === 'limits') await tolerate(() => keys.updateLimits(id, { rateLimits: [{ name: 'm', limit: op.limit, windowSeconds: 60 }], quota: { remaining: op.remaining } }, ctx));
          else if (op.kind === 'leak') await tolerate(() => keys.recordLeak(id, { url: `https://example.com${op.path}` }, ctx));
          else if (op.kind === 'revoke') await tolerate(() => keys.revoke(id, ctx));
          else {
            const ownerId = `cus_${ownerN++}`;
            await tolerate(async () => {
              await owners.create({ id: ownerId, metadata: op.metadata }, ctx);
              await owners.update(ownerId, { disabled: op.disable, metadata: op.metadata }, ctx);
            });
          }
        }
        const digests = (await Promise.all(ids.map((i) => store.getIdentity(i)))).flatMap((k) => k?.secrets.map((s) => s.digest) ?? []);
        const text = JSON.stringify((await audit.list({ take: 10_000 })).entries);
        // Not vacuous: every key issued left its entry.
        expect(text.split('"key.issued"').length - 1).toBe(ids.length);
        for (const key of issued) expect(secretLeak(text, [key])).toBeUndefined();
        for (const key of issued) {
          expect(text).not.toContain(key);
          // The random body without its checksum, and without the prefix a record shows anyway.
          expect(text).not.toContain(key.slice('acme_test_'.length, -6));
        }
        for (const digest of digests) expect(text).not.toContain(digest);
        expect(text).not.toContain(PEPPER);
        await keyring.close();
      }),
      { numRuns: 60 },
    );
  });
});
