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

/** What every query site needs: parameterised SQL, rows back. */
export interface SqlClient {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  /** Several statements in one call: PGlite only (its `query` takes one statement). */
  exec?(text: string): Promise<unknown>;
}

/** An open database. */
export interface Database extends SqlClient {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs `fn` on one connection while holding a cluster-wide advisory lock, so that
   * several instances starting at once migrate, seed and bootstrap one at a time.
   */
  exclusive<T>(fn: (client: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Advisory lock id of the startup section (any constant unique to this app). */
const STARTUP_LOCK = 7_240_531_001;

/** Opens PostgreSQL at `url`. Fails fast with a clear error when the server does not answer. */
export async function openPostgres(url: string, options: { onError?: (error: Error) => void } = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5_000 });
  // An idle client losing its connection emits on the pool; unhandled, it would crash the process.
  pool.on('error', (error) => options.onError?.(error));
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot connect to DATABASE_URL (${redactDatabaseUrl(url)}): ${(error as Error).message}`, { cause: error });
  }
  return Object.freeze({
    kind: 'postgres' as const,
    query: <Row>(text: string, params?: unknown[]) =>
      (pool.query(text, params) as unknown as Promise<{ rows: Row[] }>).catch((error: unknown) => {
        throw asUnavailable(error);
      }),
    async exclusive<T>(fn: (client: SqlClient) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK]);
        try {
          return await fn({ query: <Row>(text: string, params?: unknown[]) => client.query(text, params) as unknown as Promise<{ rows: Row[] }> });
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK]);
        }
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  });
}

/** Opens (creating on first use) the embedded PGlite database in `dir`. */
export async function openPglite(dir: string): Promise<Database> {
  const db = await PGlite.create(dir);
  const client: SqlClient = {
    query: async <Row>(text: string, params?: unknown[]) => ({ rows: (await db.query<Row>(text, params)).rows }),
    exec: (text: string) => db.exec(text),
  };
  let queue: Promise<unknown> = Promise.resolve();
  return Object.freeze({
    kind: 'pglite' as const,
    ...client,
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
