/**
 * First start: with no key at all, nobody could call the admin routes, so the server
 * issues one admin key (scope `keys:admin` only), writes it to `DATA_DIR/admin.key`
 * (mode 0600) and logs only its last 4 characters.
 *
 * The file belongs to the database that issued its key. One `DATA_DIR` can serve the
 * embedded database on one start and a `DATABASE_URL` on the next; a database that has no
 * key yet never overwrites an `admin.key` another database issued (that database would then
 * refuse the only admin key it had): its own key goes beside it, in
 * `admin.<database>.key`. A start on a database that refuses the key in `admin.key` says so
 * in the log, with what to do.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKeyAdmin, isKeysetError, redactKey, type Keyring, type KeyStore } from '@keyset/core';
import type { Database } from '../db/database.ts';
import { dataPaths, writeSecretFile } from '../data-dir.ts';
import type { Logger } from '../logger.ts';

/** Name of the bootstrap key, as `GET /api/keys` shows it. */
export const ADMIN_KEY_NAME = 'admin (created on first start)';

/**
 * A file-name-safe label of the database: `embedded` for PGlite, else the server's
 * `host-port-database` (no user name or password).
 *
 * @example
 * ```ts
 * databaseLabel('postgres://app:secret@db.internal:5432/orders'); // 'db.internal-5432-orders'
 * ```
 */
export function databaseLabel(databaseUrl: string | undefined): string {
  if (databaseUrl === undefined) return 'embedded';
  try {
    const url = new URL(databaseUrl);
    const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres';
    return `${url.hostname}-${url.port || '5432'}-${name}`.replace(/[^A-Za-z0-9._-]/g, '_');
  } catch {
    return 'server';
  }
}

/**
 * Issues the admin key when the store holds no key. Runs under the startup lock so two
 * instances starting together issue one. Resolves the key text when it created one.
 */
export async function bootstrapAdminKey(deps: {
  db: Database;
  store: KeyStore;
  keyring: Keyring;
  dataDir: string;
  /** `databaseLabel(DATABASE_URL)`: names the file when `admin.key` is another database's. */
  database: string;
  logger: Logger;
}): Promise<string | undefined> {
  const { db, store, keyring, dataDir, database, logger } = deps;
  // Audited as `bootstrap`: the server itself issued this key, at its first start.
  const admin = createKeyAdmin(keyring, { actor: 'bootstrap' });
  const shared = dataPaths(dataDir).adminKey;
  const issued = await db.exclusive(async () => {
    const { keys } = await store.listIdentities({ take: 1 });
    if (keys.length > 0) return undefined;
    // This database has no key, so a key already in admin.key was issued by another one.
    const file = existsSync(shared) ? join(dataDir, `admin.${database}.key`) : shared;
    const { key, record } = await admin.issue({ name: ADMIN_KEY_NAME, scopes: ['keys:admin'] });
    try {
      writeSecretFile(file, `${key}\n`);
    } catch (error) {
      // A key nobody can read is a liability: take it back before failing.
      await admin.revoke(record.id).catch(() => undefined);
      throw new Error(`could not write the admin key to ${file}: ${(error as Error).message}`, { cause: error });
    }
    logger.warn(
      { keyId: record.id, key: redactKey(key), file, database },
      file === shared
        ? 'no API key existed: created an admin key (scope keys:admin) and wrote it to the file; use it to issue other keys'
        : 'no API key existed: created an admin key (scope keys:admin) for this database and wrote it to the file; admin.key holds the admin key of another database and was left as it is',
    );
    return key;
  });
  if (issued === undefined) await checkAdminKeyFile({ keyring, file: shared, database, dataDir, logger });
  return issued;
}

/** Warns when `admin.key` holds a key this database refuses, and says what to do. */
async function checkAdminKeyFile(deps: { keyring: Keyring; file: string; database: string; dataDir: string; logger: Logger }): Promise<void> {
  const { keyring, file, database, dataDir, logger } = deps;
  let key: string;
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch {
    return; // No file: an operator moved the key to a secret store, as the docs advise.
  }
  if (key === '') return;
  try {
    await keyring.verify(key);
    return;
  } catch (error) {
    // Anything but a refusal (the store did not answer) proves nothing about the file.
    if (!isKeysetError(error) || error.code !== 'invalid_api_key') return;
  }
  const own = join(dataDir, `admin.${database}.key`);
  logger.warn(
    { file, key: redactKey(key), database, ...(existsSync(own) ? { thisDatabasesFile: own } : {}) },
    existsSync(own)
      ? "admin.key holds a key this database refuses (another database's, or revoked); this database's admin key is in the file thisDatabasesFile"
      : "admin.key holds a key this database refuses: it was issued by another database (start again with that one), or it was revoked or expired. Issue an admin key for this database with `npx -y pnpm@10.34.9 keys create --name admin --scopes keys:admin` (same DATA_DIR and DATABASE_URL, server stopped for the embedded database)",
  );
}
