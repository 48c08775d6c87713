import { describe, expect, it } from 'vitest';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { webCrypto } from '../crypto/crypto.web.ts';
import { createKeyring } from './keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

/**
 * A provider whose random numbers are refused until `open` is set, as workerd refuses
 * `crypto.getRandomValues` in a worker's global scope ("Disallowed operation called
 * within global scope"): a keyring made at start-up must draw none.
 */
function startupCrypto(base: CryptoProvider): { crypto: CryptoProvider; open: () => void } {
  let allowed = false;
  const crypto: CryptoProvider = {
    ...base,
    randomBytes(length: number): Uint8Array {
      if (!allowed) throw new Error('Disallowed operation called within global scope');
      return base.randomBytes(length);
    },
  };
  return { crypto, open: () => (allowed = true) };
}

describe('createKeyring at start-up', () => {
  for (const [name, base] of [['node', nodeCrypto], ['web', webCrypto]] as const) {
    it(`draws no random numbers until a request (${name} provider), then verifies and caches`, async () => {
      const { crypto, open } = startupCrypto(base);
      const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_test', crypto });
      open();
      const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
      const first = await keyring.authenticate({ authorization: `ApiKey ${key}` });
      const again = await keyring.authenticate({ authorization: `ApiKey ${key}` });
      expect(again.id).toBe(first.id);
      await expect(keyring.authenticate({ authorization: `ApiKey ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` })).rejects.toMatchObject({ code: 'invalid_api_key' });
    });
  }
});
