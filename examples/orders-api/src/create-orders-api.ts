/**
 * `createOrdersApi(config)`: storage, seed, keys, routes and an HTTP server, started
 * and listening; `close()` shuts all of it down in reverse order. Tests start it on
 * port 0 with a temporary `DATA_DIR`; `main.ts` wraps it in a process.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { createPostgresAuditStore } from '@keyset/postgres';
import { createAdapterServer } from './adapter-server.ts';
import { createApp } from './app/create-app.ts';
import { startAuditRetention } from './keys/audit-retention.ts';
import { resolveConfig, type Config, type ConfigInput } from './config.ts';
import { dataPaths, loadOrCreateCursorSecret } from './data-dir.ts';
import type { Database } from './db/database.ts';
import { openStorage } from './db/open-storage.ts';
import { seedOrders } from './db/orders-schema.ts';
import { bootstrapAdminKey, databaseLabel } from './keys/bootstrap-admin-key.ts';
import { createKeyServices, type KeyServices } from './keys/key-services.ts';
import { mountLeakAlerts } from './keys/leak-alerts.ts';
import { createLogger, type Logger } from './logger.ts';
import { startTelemetry } from './telemetry.ts';
import type { KeysetTelemetry } from '@keyset/opentelemetry';

/** Options of `createOrdersApi`: any part of `Config` (defaults fill the rest), and a logger. */
export interface OrdersApiOptions extends ConfigInput {
  /** @default a pino logger at `logLevel` on stdout */
  logger?: Logger;
  /**
   * keyset's metrics and spans through a meter and tracer of your own (tests read them
   * back); when given, `METRICS_PORT` and `OTEL_EXPORTER_OTLP_ENDPOINT` start nothing.
   * @default what `metricsPort` and `otlpEndpoint` ask for, else none
   */
  telemetry?: KeysetTelemetry;
}

/** A running orders API. */
export interface OrdersApi {
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  readonly port: number;
  /** `GET` this for the Prometheus text format, when `METRICS_PORT` is set. */
  readonly metricsUrl: string | undefined;
  readonly config: Config;
  /** The admin key of this database: `DATA_DIR/admin.<database>.key` when it has one, else `DATA_DIR/admin.key`. */
  readonly adminKey: string | undefined;
  /** The database the server uses (for tests and tools; do not close it). */
  readonly db: Database;
  readonly keys: KeyServices;
  readonly logger: Logger;
  /** Stops accepting, finishes in-flight requests (10 s at most), flushes `lastUsedAt`, closes Redis and the database. */
  close(): Promise<void>;
}

/** How long in-flight requests get to finish on shutdown. */
const DRAIN_MS = 10_000;

/**
 * Starts the orders API.
 *
 * @example
 * ```ts
 * const api = await createOrdersApi({ port: 0, dataDir: '/tmp/orders', seedOrders: 500, logLevel: 'silent' });
 * const res = await fetch(`${api.url}/api/keys`, { headers: { authorization: `ApiKey ${api.adminKey}` } });
 * await api.close();
 * ```
 */
export async function createOrdersApi(options: OrdersApiOptions = {}): Promise<OrdersApi> {
  const { logger: givenLogger, telemetry: givenTelemetry, ...input } = options;
  const config = resolveConfig(input);
  const logger = givenLogger ?? createLogger(config.logLevel);
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        logger.error({ err: error }, 'shutdown step failed');
      }
    }
    cleanups.length = 0;
  };

  const started = performance.now();
  const elapsedMs = (): number => Math.round(performance.now() - started);
  try {
    // A first start creates the embedded database (several seconds) and seeds it: say so,
    // so the wait between the banner and "listening" is never silent.
    const firstPglite = config.databaseUrl === undefined && !existsSync(dataPaths(config.dataDir).pgdata);
    logger.info(
      { dataDir: config.dataDir, database: config.databaseUrl === undefined ? 'pglite' : 'postgres' },
      firstPglite ? 'first start: creating the embedded PostgreSQL database (a few seconds)' : 'opening the database',
    );
    const storage = await openStorage(config, {
      holder: 'server',
      onPoolError: (error) => logger.error({ err: error }, 'idle PostgreSQL connection failed'),
    });
    cleanups.push(() => storage.close());
    const { db } = storage;
    logger.info({ ms: elapsedMs() }, 'database ready');
    const seeded = await db.exclusive((client) =>
      seedOrders(client, config.seedOrders, (inserted, total) =>
        logger.info({ orders: inserted, of: total, ms: elapsedMs() }, 'seeding orders'),
      ),
    );
    if (seeded > 0) logger.info({ orders: seeded, ms: elapsedMs() }, 'seeded orders on first start');

    const cursorSecrets = config.cursorSecrets ?? [loadOrCreateCursorSecret(config.dataDir)];
    // Last to stop: the final export sees every request the server answered.
    const observability = givenTelemetry === undefined ? await startTelemetry(config, logger) : { telemetry: givenTelemetry, metricsUrl: undefined, close: async () => {} };
    cleanups.push(() => observability.close());
    const { telemetry } = observability;
    const keys = await createKeyServices({ db, config, logger, ...(telemetry === undefined ? {} : { telemetry }) });
    cleanups.push(() => keys.close());
    const database = databaseLabel(config.databaseUrl);
    await bootstrapAdminKey({ db, store: keys.store, keyring: keys.keyring, dataDir: config.dataDir, database, logger });

    // The key store writes each change's audit entry; this reads and prunes the same table.
    const audit = createPostgresAuditStore({ client: db });
    if (config.auditRetentionDays !== false) {
      const retention = await startAuditRetention({ audit, days: config.auditRetentionDays, logger });
      cleanups.push(async () => retention.stop());
    }

    const app = createApp({
      db,
      audit,
      keyring: keys.keyring,
      guard: keys.guard,
      limiter: keys.limiter,
      // The usage routes read through connections of their own (the counter writes through the main pool).
      usage: keys.usage.reads,
      cursorSecrets,
      cursorTtlSeconds: config.cursorTtlSeconds,
      keySchemes: config.keySchemes,
      ...(config.maxOffset === false ? {} : { maxOffset: config.maxOffset }),
    });
    const serverOptions = { logger, publicUrl: config.publicUrl };
    const server = await createAdapterServer(config.adapter, app, serverOptions);
    mountLeakAlerts(server, keys.keyring, config, logger);
    const port = await listen(server, config.port, config.host);
    cleanups.push(() => stopServer(server));

    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;
    logger.info({ url, adapter: config.adapter, database: db.kind, redis: config.redisUrl !== undefined, dataDir: config.dataDir, readyMs: elapsedMs() }, 'orders API listening');

    let closing: Promise<void> | undefined;
    return Object.freeze({
      url,
      port,
      metricsUrl: observability.metricsUrl,
      config,
      adminKey: readAdminKey(config.dataDir, database),
      db,
      keys,
      logger,
      close: () => (closing ??= cleanup()),
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** This database's admin key: `admin.<database>.key` when it has one of its own, else `admin.key`. */
function readAdminKey(dataDir: string, database: string): string | undefined {
  for (const file of [join(dataDir, `admin.${database}.key`), dataPaths(dataDir).adminKey]) {
    try {
      const key = readFileSync(file, 'utf8').trim();
      if (key !== '') return key;
    } catch {
      // No such file: try the next.
    }
  }
  return undefined;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting, lets in-flight requests finish, then drops what is left. */
function stopServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    // Keep-alive connections with no request in flight would hold close() open.
    server.closeIdleConnections();
  });
}
