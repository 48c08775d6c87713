/**
 * The example's database: embedded PGlite persisted in `DATA_DIR/pgdata` by default,
 * a node-postgres `Pool` when `DATABASE_URL` is set. Both are used through the same
 * structural `{ query(text, params) }` shape that `@keyset/postgres` takes, with the
 * same SQL and the same migrations.
 * @module
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { asUnavailable } from './connection-errors.ts';
import { limitUsageReads } from './usage-reads.ts';

/** What every query site needs: parameterised SQL, rows back. */
export interface SqlClient {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  /** Several statements in one call: PGlite only (its `query` takes one statement). */
  exec?(text: string): Promise<unknown>;
}

/** A dedicated PostgreSQL session for `LISTEN` (what `createPostgresRevocationBus` takes). */
export type ListenerClient = pg.Client;

/** An open database. */
export interface Database extends SqlClient {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Where the usage routes read (docs/usage.md, "Reads"): on PostgreSQL a pool of its own,
   * `USAGE_READ_CONNECTIONS` connections with a statement timeout of their own, so reads
   * of large ranges never hold the connections the API's requests need; on PGlite (one
   * connection for everything) the database itself. Either way at most
   * `USAGE_READ_CONNECTIONS` reads at once; past that, 429 `usage_reads_busy`.
   */
  readonly usageReads: SqlClient;
  /**
   * PostgreSQL only: connects a new session of its own (not from the pool, which would
   * hand it back), for the revocation bus's `LISTEN`. The caller ends it.
   */
  connectListener?: () => Promise<ListenerClient>;
  /**
   * Runs `fn` on one connection while holding a cluster-wide advisory lock, so that
   * several instances starting at once migrate, seed and bootstrap one at a time.
   */
  exclusive<T>(fn: (client: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Advisory lock id of the startup section (any constant unique to this app). */
const STARTUP_LOCK = 7_240_531_001;

/**
 * Connections of the usage reads' own pool (beside the main pool's 10, never out of them),
 * and so the reads that run at once. One: a large read keeps a database core busy while it
 * runs, and two at once can take every core of a small server from the API's queries
 * (measured by `pnpm bench usage-reads`).
 */
export const USAGE_READ_CONNECTIONS = 1;
/**
 * The longest a usage read may run (its own `statement_timeout`), or the query timeout
 * when that is shorter: the largest read (an owner's 1,440 minutes) takes well under it
 * (docs/usage.md, "Reads"), and one that does not is cut off instead of piling up.
 */
export const USAGE_READ_TIMEOUT_MS = 3_000;

/** How long after `statement_timeout` the pool stops waiting for a server that says nothing. */
const SILENT_SERVER_MARGIN_MS = 500;
/** Opening a connection when no query timeout is configured. */
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** Options of `openPostgres`. */
export interface PostgresOptions {
  /** Errors of idle pooled connections (unhandled, they would crash the process). */
  onError?: (error: Error) => void;
  /**
   * Bound of one query (`DATABASE_QUERY_TIMEOUT_MS`), `0` for none. Two mechanisms, because
   * each covers what the other cannot:
   * - `statement_timeout` (server side): PostgreSQL cancels a statement running longer
   *   (SQLSTATE 57014) and the connection stays usable. It needs a server that runs.
   * - `query_timeout` (node-postgres, client side), `queryTimeoutMs` + 500 ms: a server
   *   that stopped answering (SIGSTOP, a partition, a frozen VM) with the connection
   *   still open never cancels anything; the pool then fails the query and drops that
   *   connection. The margin lets a live server's own cancel win.
   * Both become 503 `unavailable` (`asUnavailable`). The same bound applies to opening a
   * connection. The startup section (`exclusive`: migrations, seeding, the advisory lock
   * wait) runs on its own connection without these bounds.
   * @default 5000
   */
  queryTimeoutMs?: number;
}

/** Opens PostgreSQL at `url`. Fails fast with a clear error when the server does not answer. */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Database> {
  const { queryTimeoutMs = 5_000 } = options;
  const bounded = queryTimeoutMs > 0;
  const connectionTimeoutMillis = bounded ? queryTimeoutMs : DEFAULT_CONNECT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis,
    ...(bounded ? { statement_timeout: queryTimeoutMs, query_timeout: queryTimeoutMs + SILENT_SERVER_MARGIN_MS } : {}),
  });
  const readTimeoutMs = bounded ? Math.min(queryTimeoutMs, USAGE_READ_TIMEOUT_MS) : USAGE_READ_TIMEOUT_MS;
  const reads = new pg.Pool({
    connectionString: url,
    max: USAGE_READ_CONNECTIONS,
    connectionTimeoutMillis,
    statement_timeout: readTimeoutMs,
    query_timeout: readTimeoutMs + SILENT_SERVER_MARGIN_MS,
  });
  // An idle client losing its connection emits on the pool; unhandled, it would crash the process.
  pool.on('error', (error) => options.onError?.(error));
  reads.on('error', (error) => options.onError?.(error));
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    await reads.end().catch(() => undefined);
    throw new Error(`cannot connect to DATABASE_URL (${redactDatabaseUrl(url)}): ${(error as Error).message}`, { cause: error });
  }
  const through =
    (on: pg.Pool) =>
    <Row>(text: string, params?: unknown[]) =>
      (on.query(text, params) as unknown as Promise<{ rows: Row[] }>).catch((error: unknown) => {
        throw asUnavailable(error);
      });
  return Object.freeze({
    kind: 'postgres' as const,
    query: through(pool),
    usageReads: limitUsageReads({ query: through(reads) }, USAGE_READ_CONNECTIONS),
    async exclusive<T>(fn: (client: SqlClient) => Promise<T>): Promise<T> {
      // Its own session, without the pool's query bounds: waiting for another instance's
      // migrations and seeding (the advisory lock), or seeding a million rows, may take longer.
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis });
      client.on('error', (error) => options.onError?.(error));
      await client.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK]);
        try {
          return await fn({ query: <Row>(text: string, params?: unknown[]) => client.query(text, params) as unknown as Promise<{ rows: Row[] }> });
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK]);
        }
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    async connectListener(): Promise<ListenerClient> {
      // keepAlive: a server that vanished without closing the connection is noticed, so
      // the bus drops its cache and listens again instead of waiting on a dead socket.
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis, keepAlive: true });
      // Until the bus attaches its own handlers, an error must not crash the process.
      client.on('error', (error) => options.onError?.(error));
      try {
        await client.connect();
      } catch (error) {
        await client.end().catch(() => undefined);
        throw asUnavailable(error);
      }
      return client;
    },
    close: async () => {
      await reads.end();
      await pool.end();
    },
  });
}

/**
 * PostgreSQL settings for the embedded database. PGlite's WebAssembly memory never
 * shrinks and PostgreSQL's buffer cache lives in it: with the default `shared_buffers`
 * (128MB) the idle example held about 440 MB, with 8MB about 265 MB; 8MB still holds the
 * example's tables and indexes (a few MB). A PostgreSQL server keeps its own settings.
 */
const PGLITE_SETTINGS: readonly string[] = ['-c', 'shared_buffers=8MB'];

/** Opens (creating on first use) the embedded PGlite database in `dir`. */
export async function openPglite(dir: string): Promise<Database> {
  const db = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS] });
  const client: SqlClient = {
    query: async <Row>(text: string, params?: unknown[]) => ({ rows: (await db.query<Row>(text, params)).rows }),
    exec: (text: string) => db.exec(text),
  };
  let queue: Promise<unknown> = Promise.resolve();
  return Object.freeze({
    kind: 'pglite' as const,
    ...client,
    usageReads: limitUsageReads(client, USAGE_READ_CONNECTIONS),
    // One process owns PGlite (see the DATA_DIR lock); serialising callers is enough.
    exclusive<T>(fn: (client: SqlClient) => Promise<T>): Promise<T> {
      const run = queue.then(() => fn(client));
      queue = run.catch(() => undefined);
      return run;
    },
    close: () => db.close(),
  });
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return 'postgres://…';
  }
}
