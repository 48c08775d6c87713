/**
 * The behaviour every `KeyStore` must have, as a reusable vitest suite. Not a test file
 * itself: `*.test.ts` files call `describeKeyStoreContract` once per backend (PGlite, a
 * real PostgreSQL server), so both are held to exactly the same assertions. The suite's
 * parts, by topic, are the `key-store-*.contract.ts` files beside this one; what they share
 * is in key-store-fixtures.test-support.ts.
 * @module
 */
import type { KeyStore } from '@keyset/core';
import type { StoredIdentity, StoredSecret } from '@keyset/core/adapter';
import { beforeEach, describe, expect, it } from 'vitest';
import { at, HOUR, makeIdentity, makeSecret, type ContractRun, type ContractSubject } from './key-store-fixtures.test-support.ts';
import { describeIdentities } from './key-store-identities.contract.ts';
import { describeListingAndUse } from './key-store-listing.contract.ts';
import { describeRolesAndLimits } from './key-store-roles-limits.contract.ts';
import { describeSecrets } from './key-store-secrets.contract.ts';

/**
 * Registers the contract suite for one backend. `makeStore` runs before every test and
 * must return a store over empty tables.
 *
 * @example
 * ```ts
 * describeKeyStoreContract('memory', async () => ({ store: createMemoryKeyStore() }));
 * ```
 */
export function describeKeyStoreContract(name: string, makeStore: () => Promise<ContractSubject>): void {
  describe(`KeyStore contract: ${name}`, () => {
    let subject: ContractSubject;
    let store: KeyStore;
    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
    });
    async function issue(identity: Partial<StoredIdentity> = {}, secret: Partial<StoredSecret> = {}) {
      const i = makeIdentity(identity);
      const s = makeSecret(secret);
      await store.insertIdentity(i, s);
      return { identity: i, secret: s };
    }
    const t: ContractRun = {
      get subject() {
        return subject;
      },
      get store() {
        return store;
      },
      issue,
    };

    describeRolesAndLimits(t);
    describeIdentities(t);
    describeSecrets(t);
    describeListingAndUse(t);

    it('answers every method in one round trip', async () => {
      if (subject.roundTrips === undefined) return;
      const count = subject.roundTrips;
      const { identity, secret } = await issue();
      const calls: (() => Promise<unknown>)[] = [
        () => store.insertIdentity(makeIdentity(), makeSecret()),
        () => store.addSecret(identity.id, makeSecret(), at(HOUR)),
        () => store.findByDigest(secret.digest),
        () => store.getIdentity(identity.id),
        () => store.listIdentities({ take: 3, after: { createdAt: at(HOUR), id: 'key_z' } }),
        () => store.listIdentities({ take: 3, offset: 1, withTotal: true }),
        () => store.touchLastUsed([{ digest: secret.digest, at: at(1) }]),
        () => store.recordLeak!(identity.id, at(2), 'https://github.com/o/r'),
        () => store.revoke(identity.id, at(HOUR)),
      ];
      for (const call of calls) {
        const before = count();
        await call();
        expect(count() - before).toBe(1);
      }
    });
  });
}
