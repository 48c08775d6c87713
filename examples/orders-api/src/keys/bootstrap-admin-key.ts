/**
 * First start: with no key at all, nobody could call the admin routes, so the server
 * issues one admin key (scope `keys:admin` only), writes it to `DATA_DIR/admin.key`
 * (mode 0600) and logs only its last 4 characters.
 * @module
 */
import { createKeyAdmin, redactKey, type Keyring, type KeyStore } from '@keyset/core';
import type { Database } from '../db/database.ts';
import { dataPaths, writeSecretFile } from '../data-dir.ts';
import type { Logger } from '../logger.ts';

/** Name of the bootstrap key, as `GET /api/keys` shows it. */
export const ADMIN_KEY_NAME = 'admin (created on first start)';

/**
 * Issues the admin key when the store holds no key. Runs under the startup lock so two
 * instances starting together issue one. Resolves the key text when it created one.
 */
export async function bootstrapAdminKey(deps: {
  db: Database;
  store: KeyStore;
  keyring: Keyring;
  dataDir: string;
  logger: Logger;
}): Promise<string | undefined> {
  const { db, store, keyring, dataDir, logger } = deps;
  const admin = createKeyAdmin(keyring);
  return db.exclusive(async () => {
    const { keys } = await store.listIdentities({ take: 1 });
    if (keys.length > 0) return undefined;
    const { key, record } = await admin.issue({ name: ADMIN_KEY_NAME, scopes: ['keys:admin'] });
    const file = dataPaths(dataDir).adminKey;
    try {
      writeSecretFile(file, `${key}\n`);
    } catch (error) {
      // A key nobody can read is a liability: take it back before failing.
      await admin.revoke(record.id).catch(() => undefined);
      throw new Error(`could not write the admin key to ${file}: ${(error as Error).message}`, { cause: error });
    }
    logger.warn(
      { keyId: record.id, key: redactKey(key), file },
      'no API key existed: created an admin key (scope keys:admin) and wrote it to the file; use it to issue other keys',
    );
    return key;
  });
}
