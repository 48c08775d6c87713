/**
 * Opens the database the configuration names and brings its schema up to date. With
 * PGlite the data directory is locked first: PGlite is single-process, so the server
 * and the key CLI must never open the same `pgdata/` at once.
 * @module
 */
import { migrate } from '@keyset/postgres';
import type { Config } from '../config.ts';
import { dataPaths, ensureDataDir, lockDataDir } from '../data-dir.ts';
import { openPglite, openPostgres, type Database } from './database.ts';
import { migrateOrders } from './orders-schema.ts';

/** An open, migrated database and how to let go of it. */
export interface Storage {
  db: Database;
  /** Closes the database, then releases the data-directory lock. */
  close(): Promise<void>;
}

/**
 * Locks (PGlite only), opens and migrates. `holder` names the process in the lock file
 * so the other side can say who holds it. Throws `DataDirLockedError` when held.
 */
export async function openStorage(
  config: Pick<Config, 'dataDir' | 'databaseUrl'> & Partial<Pick<Config, 'databaseQueryTimeoutMs'>>,
  options: { holder: 'server' | 'cli'; onPoolError?: (error: Error) => void },
): Promise<Storage> {
  ensureDataDir(config.dataDir);
  const release = config.databaseUrl === undefined ? lockDataDir(config.dataDir, options.holder) : () => undefined;
  let db: Database | undefined;
  try {
    db =
      config.databaseUrl === undefined
        ? await openPglite(dataPaths(config.dataDir).pgdata)
        : await openPostgres(config.databaseUrl, {
            ...(options.onPoolError ? { onError: options.onPoolError } : {}),
            ...(config.databaseQueryTimeoutMs === undefined ? {} : { queryTimeoutMs: config.databaseQueryTimeoutMs }),
          });
    // Migrations run under the startup lock: several instances may start at once.
    await db.exclusive(async (client) => {
      await migrateOrders(client);
      await migrate(client);
    });
  } catch (error) {
    await db?.close().catch(() => undefined);
    release();
    throw error;
  }
  const open = db;
  let closing: Promise<void> | undefined;
  return {
    db: open,
    close: () =>
      (closing ??= (async () => {
        try {
          await open.close();
        } finally {
          release();
        }
      })()),
  };
}
