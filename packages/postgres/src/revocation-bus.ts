/**
 * Revocation bus on PostgreSQL `LISTEN/NOTIFY`, for deployments without Redis: keyring
 * changes (`revoked`, `rotated`, `updated`) reach every instance, each evicts its cached
 * results and acknowledges, and `revoke()` resolves once all did (or after `ackTimeoutMs`,
 * with a warning). The acknowledgement protocol is core's `createRevocationProtocol`, the
 * same the Redis bus speaks; this module only moves its messages through PostgreSQL.
 *
 * How the publisher knows how many instances to wait for: each bus's listening session
 * sets `application_name` to `keyset-bus:<channel>`, and the NOTIFY statement counts those
 * sessions in `pg_stat_activity` in the same round trip (ours included, as Redis's PUBLISH
 * reply does). Delivery is at most once: an instance whose listening connection is down
 * misses the event. So when that connection is lost, the bus drops every cached
 * verification result (`keyring.invalidateAll()`); with `connectListener` it connects a
 * new one, listens, and drops the cache once more, so no key revoked during the gap is
 * served from the cache after it.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, createRevocationProtocol, isRevocationEvent, type KnownOptions, withTimeout } from '@keyset/core/adapter';
import type { RevocationBusLogger, RevocationEvent, RevocationPublished } from '@keyset/core/adapter';
import type { Queryable } from './queryable.ts';

/** A notification as node-postgres hands it out. */
export interface PostgresNotification {
  channel: string;
  payload?: string | undefined;
}

/**
 * The dedicated listening connection: a node-postgres `Client` (not a `Pool`: LISTEN holds
 * for the session). The bus runs `LISTEN` and its acknowledgements on it, and handles its
 * `'error'` and `'end'` (the session is lost). It never ends a listener you passed; it ends
 * those `connectListener` made.
 */
export interface NotificationListener {
  query(text: string, params?: unknown[]): Promise<unknown>;
  on(event: 'notification', listener: (message: PostgresNotification) => void): unknown;
  removeListener(event: 'notification', listener: (message: PostgresNotification) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
  removeListener(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
  end?(): Promise<void>;
}

/** What the bus needs from a keyring (`createKeyring` from `@keyset/core` fits). */
export interface PostgresRevocableKeyring {
  onChange(listener: (event: RevocationEvent) => void | Promise<void>): () => void;
  invalidate(identityId: string): void;
  /** Drops every cached result; called when the listening connection is lost and when a new one listens. */
  invalidateAll?(): void;
}

/** Options of `createPostgresRevocationBus`. */
export interface PostgresRevocationBusOptions {
  /** Sends the NOTIFY: a node-postgres `Pool` (or any `{ query(text, params) }`). */
  client: Queryable;
  /** A dedicated connection for `LISTEN` (`new pg.Client(…)`, connected). */
  listener: NotificationListener;
  /**
   * Makes a new connected listening connection when the current one is lost (a PostgreSQL
   * restart or failover, `idle_session_timeout`, a proxy closing it). Retried 100 ms,
   * 200 ms, … up to every 5 s until it listens again or the bus is closed. Without it a
   * lost listener stays lost (logged): other instances' revocations then reach this one
   * only at its cache TTL.
   */
  connectListener?: () => Promise<NotificationListener>;
  keyring: PostgresRevocableKeyring;
  /**
   * Channel; every instance of one deployment uses the same. `^[a-z_][a-z0-9_]*$`, at most
   * 40 characters (it is also part of the listening session's `application_name`).
   * @default 'keyset_revocations'
   */
  channel?: string;
  /**
   * Publish every `keyring.onChange` event (so `revoke()` waits for the acknowledgements).
   * @default true
   */
  publishOnChange?: boolean;
  /**
   * Longest wait for the NOTIFY statement.
   * @default 1000
   */
  timeoutMs?: number;
  /**
   * Longest wait, after the NOTIFY, for every other instance to confirm its eviction.
   * @default 250
   */
  ackTimeoutMs?: number;
  /** @default console */
  logger?: RevocationBusLogger;
  /**
   * Told after each publish how long the other instances took to confirm their eviction
   * (the bus's lag), e.g. `telemetry.onRevocationPublished`.
   * @default none
   */
  onPublished?: (event: RevocationPublished) => void;
}

/** Every name `PostgresRevocationBusOptions` knows, checked when the bus is made. */
const BUS_OPTIONS = { client: true, listener: true, connectListener: true, keyring: true, channel: true, publishOnChange: true, timeoutMs: true, ackTimeoutMs: true, logger: true, onPublished: true } as const satisfies KnownOptions<PostgresRevocationBusOptions>;

/** A running bus. */
export interface PostgresRevocationBus {
  /** Resolves once the listening session runs `LISTEN`; rejects if that failed. */
  readonly ready: Promise<void>;
  readonly instanceId: string;
  /** Publishes one event; resolves when every other instance acknowledged, or after `ackTimeoutMs`. */
  publish(event: RevocationEvent): Promise<void>;
  /**
   * Stops listening (`UNLISTEN`, clears the session's `application_name`). Leaves `client`
   * and the `listener` you passed open; ends listeners that `connectListener` made.
   */
  close(): Promise<void>;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,39}$/;

const consoleLogger: RevocationBusLogger = {
  warn: (details, message) => console.warn(`[keyset] ${message}`, details),
};

/**
 * Connects a keyring to the other instances through PostgreSQL.
 *
 * @example
 * ```ts
 * const listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
 * await listener.connect();
 * const bus = createPostgresRevocationBus({ client: pool, listener, keyring });
 * await bus.ready;
 * await createKeyAdmin(keyring).revoke(id); // resolves once every other instance confirmed its eviction
 * ```
 */
export function createPostgresRevocationBus(options: PostgresRevocationBusOptions): PostgresRevocationBus {
  assertKnownOptions('createPostgresRevocationBus', options, BUS_OPTIONS);
  const {
    client,
    listener,
    connectListener,
    keyring,
    channel = 'keyset_revocations',
    publishOnChange = true,
    timeoutMs = 1000,
    ackTimeoutMs = 250,
    logger = consoleLogger,
  } = options;
  if (typeof client?.query !== 'function') throw new ConfigError('createPostgresRevocationBus needs `client`: a node-postgres Pool');
  if (connectListener !== undefined && typeof connectListener !== 'function') throw new ConfigError('connectListener must be a function returning a connected node-postgres Client');
  if (typeof listener?.query !== 'function' || typeof listener.on !== 'function' || typeof listener.removeListener !== 'function') {
    throw new ConfigError('createPostgresRevocationBus needs `listener`: a dedicated, connected node-postgres Client');
  }
  if ((listener as unknown) === client) throw new ConfigError('client and listener must differ: the listener holds its session for LISTEN');
  if (typeof keyring?.onChange !== 'function' || typeof keyring.invalidate !== 'function') {
    throw new ConfigError('createPostgresRevocationBus needs `keyring` with onChange(listener) and invalidate(id)');
  }
  if (typeof channel !== 'string' || !CHANNEL.test(channel)) throw new ConfigError(`channel must match ^[a-z_][a-z0-9_]{0,39}$, got ${JSON.stringify(channel)}`);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new ConfigError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);

  const applicationName = `keyset-bus:${channel}`;
  // Counted in the NOTIFY's own statement: one round trip. Sessions of the same role are
  // always visible in pg_stat_activity.
  const notifySql = `SELECT pg_catalog.pg_notify($1, $2) AS sent,
    (SELECT count(*)::int FROM pg_catalog.pg_stat_activity WHERE application_name = $3 AND datname = pg_catalog.current_database()) AS listeners`;
  let closed = false;
  /** The listening connection now: `listener`, or the latest one `connectListener` made. */
  let current = listener;
  let madeByUs = false;
  let lost = false;
  const protocol = createRevocationProtocol({
    invalidate: (id) => keyring.invalidate(id),
    // On the listening connection: it is ours alone, so an acknowledgement never queues
    // behind a busy pool.
    sendAck: (ack) => withTimeout(current.query('SELECT pg_catalog.pg_notify($1, $2)', [channel, ack]), timeoutMs, 'PostgreSQL NOTIFY'),
    ackTimeoutMs,
    logger,
    ...(options.onPublished === undefined ? {} : { onPublished: options.onPublished }),
  });

  function onNotification(message: PostgresNotification): void {
    if (closed || message.channel !== channel || typeof message.payload !== 'string') return;
    protocol.receive(message.payload);
  }

  const dropCache = (): void => keyring.invalidateAll?.();
  const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

  function attach(connection: NotificationListener): void {
    connection.on('notification', onNotification);
    connection.on('error', onLost);
    connection.on('end', onLost);
  }
  function detach(connection: NotificationListener): void {
    connection.removeListener('notification', onNotification);
    connection.removeListener('error', onLost);
    connection.removeListener('end', onLost);
  }
  /** Ends a connection the bus made; a late 'error' from it must not become an uncaught exception. */
  function retire(connection: NotificationListener): void {
    connection.on('error', () => undefined);
    connection.end?.().catch(() => undefined);
  }
  async function listenOn(connection: NotificationListener): Promise<void> {
    await connection.query(`SELECT pg_catalog.set_config('application_name', $1, false)`, [applicationName]);
    // The channel is validated above: safe as a quoted identifier.
    await connection.query(`LISTEN "${channel}"`);
  }

  /** The session is gone ('error' then 'end', or either alone): every message until a new LISTEN is missed. */
  function onLost(error?: Error): void {
    if (closed || lost) return;
    lost = true;
    detach(current);
    if (madeByUs) retire(current);
    dropCache();
    logger.warn(
      error === undefined ? { channel } : { channel, error: describe(error) },
      connectListener === undefined
        ? 'revocation bus lost its listening connection and has no connectListener: dropped cached keys; revocations from other instances now reach this instance only at its cache TTL'
        : 'revocation bus lost its listening connection: dropped cached keys; connecting a new one',
    );
    if (connectListener !== undefined) void relisten(connectListener);
  }

  async function relisten(connect: () => Promise<NotificationListener>): Promise<void> {
    for (let delay = 100; !closed; delay = Math.min(delay * 2, 5000)) {
      await new Promise<void>((resolve) => {
        // Node's timer has `unref` (a retry must not keep the process alive); the DOM types,
        // which this package builds with, say `number`.
        const timer: unknown = setTimeout(resolve, delay);
        (timer as { unref?: () => void }).unref?.();
      });
      if (closed) return;
      let next: NotificationListener | undefined;
      try {
        next = await connect();
        attach(next);
        await listenOn(next);
      } catch (error) {
        if (next !== undefined) {
          detach(next);
          retire(next);
        }
        logger.warn({ channel, error: describe(error), retryInMs: Math.min(delay * 2, 5000) }, 'revocation bus could not listen again; retrying');
        continue;
      }
      if (closed) {
        detach(next);
        retire(next);
        return;
      }
      current = next;
      madeByUs = true;
      lost = false;
      dropCache();
      logger.warn({ channel }, 'revocation bus listens again: dropped cached keys once more');
      return;
    }
  }

  attach(listener);
  const ready = listenOn(listener);
  ready.catch(() => undefined);

  async function publish(event: RevocationEvent): Promise<void> {
    if (!isRevocationEvent(event)) throw new ConfigError('A revocation event is { type: "revoked" | "rotated" | "updated", id: string }');
    if (closed) throw new Error('The revocation bus is closed');
    await protocol.publish(event, async (message) => {
      const result = await withTimeout(client.query(notifySql, [channel, message, applicationName]), timeoutMs, 'PostgreSQL NOTIFY');
      return Number(result.rows[0]?.listeners ?? 0);
    });
  }

  const stopListening = publishOnChange
    ? keyring.onChange((event) =>
        publish(event).catch((error: unknown) => {
          logger.warn(
            { type: event.type, id: event.id, error: error instanceof Error ? error.message : String(error) },
            'could not publish a keyring change; other instances keep their cache until its TTL',
          );
        }),
      )
    : (): void => undefined;

  return Object.freeze({
    ready,
    instanceId: protocol.instanceId,
    publish,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      stopListening();
      detach(current);
      if (lost) return;
      const connection = current;
      await withTimeout(
        connection.query(`UNLISTEN "${channel}"`).then(() => connection.query(`SELECT pg_catalog.set_config('application_name', '', false)`)),
        timeoutMs,
        'PostgreSQL UNLISTEN',
      ).catch(() => undefined);
      if (madeByUs) retire(connection);
    },
  });
}
