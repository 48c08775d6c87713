/**
 * The revocation bus on PostgreSQL `LISTEN/NOTIFY`, wired whenever `DATABASE_URL` is set
 * (with or without Redis): a key revoked, rotated or changed on one instance is evicted
 * from every other instance's cache before the admin route answers (docs/deployment.md,
 * "Revocation across instances"). With `REDIS_URL` too, both buses carry every change, so
 * a Redis outage does not delay a revocation: revoking needs the database anyway.
 *
 * Each instance holds one session of its own for `LISTEN`. When it is lost (a restart, a
 * failover, a proxy closing it) the bus drops every cached key at once and again when it
 * listens on a new session, so no key revoked during the gap is served from the cache.
 * @module
 */
import type { Keyring } from '@keyset/core';
import { createPostgresRevocationBus } from '@keyset/postgres';
import type { RevocationPublished } from '@keyset/core/adapter';
import type { ListenerClient, SqlClient } from '../db/database.ts';
import type { Logger } from '../logger.ts';

/** A listening bus and how to stop it. */
export interface PostgresBus {
  close(): Promise<void>;
}

/** Connects the listening session and the bus; resolves once it listens. */
export async function connectPostgresBus(deps: {
  db: SqlClient;
  connectListener: () => Promise<ListenerClient>;
  keyring: Keyring;
  logger: Logger;
  /** The bus's lag after each publish (`keyset.revocation.lag`), when telemetry is on. */
  onPublished?: (event: RevocationPublished) => void;
}): Promise<PostgresBus> {
  const { db, connectListener, keyring, logger, onPublished } = deps;
  const log = logger.child({ component: 'postgres-bus' });
  const listener = await connectListener();
  try {
    const bus = createPostgresRevocationBus({
      client: db,
      listener,
      // A lost session is replaced (retried 100 ms, 200 ms, … up to every 5 s).
      connectListener,
      keyring,
      logger: log,
      ...(onPublished === undefined ? {} : { onPublished }),
    });
    await bus.ready;
    return {
      async close() {
        await bus.close().catch(() => undefined);
        // The bus ends the sessions it made; the first one is ours to end.
        await listener.end().catch(() => undefined);
      },
    };
  } catch (error) {
    await listener.end().catch(() => undefined);
    throw error;
  }
}
