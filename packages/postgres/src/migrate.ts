/**
 * The store's schema as plain SQL, applied by `migrate()` or by your own migration tool
 * (`migrationSql()` returns the same text).
 *
 * The script is idempotent and safe to run from several instances at once:
 * - it runs as ONE multi-statement query, which PostgreSQL executes as one implicit
 *   transaction (simple query protocol), so a failure leaves nothing half-applied and
 *   no pooled connection is left inside an open transaction;
 * - its first statement takes a transaction-scoped advisory lock keyed by schema and
 *   prefix, so concurrent migrators queue up instead of racing on `CREATE TABLE`;
 * - every version runs at most once, recorded in `<prefix>migrations`.
 * @module
 */
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import { tableNames, type TableNames } from './internal/identifiers.ts';
import { runQuery } from './internal/run-query.ts';
import type { MultiStatementQueryable } from './queryable.ts';

/** Where the tables live. Shared by `migrate`, `migrationSql` and `createPostgresKeyStore`. */
export interface TableOptions {
  /**
   * Schema of the tables; created when missing. Must match `^[a-z_][a-z0-9_]*$`.
   * @default 'public'
   */
  schema?: string;
  /**
   * Prefix of every table and index name. Must match `^[a-z_][a-z0-9_]*$`.
   * @default 'keyset_'
   */
  tablePrefix?: string;
}

/** Every name `TableOptions` knows, checked by `migrationSql` and `migrate`. */
const TABLE_OPTIONS = { schema: true, tablePrefix: true } as const satisfies KnownOptions<TableOptions>;

interface Migration {
  version: number;
  sql: (t: TableNames) => string;
}

// Timestamps are timestamptz(3): exactly the precision of a JS Date, so every value the
// store reads back equals what it wrote, and a keyset cursor built from a Date is exact.
// A microsecond value written by other SQL (e.g. `now()`) is rounded once, on write.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: (t) => `
    CREATE TABLE IF NOT EXISTS ${t.identities} (
      id text PRIMARY KEY,
      name text NOT NULL,
      scopes text[] NOT NULL,
      rate_limit integer CHECK (rate_limit > 0),
      rate_window_seconds double precision CHECK (rate_window_seconds > 0),
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      expires_at timestamptz(3),
      revoked_at timestamptz(3),
      CHECK ((rate_limit IS NULL) = (rate_window_seconds IS NULL))
    );
    CREATE INDEX IF NOT EXISTS ${t.identitiesListIndex} ON ${t.identities} (created_at DESC, id DESC);
    CREATE TABLE IF NOT EXISTS ${t.secrets} (
      digest text PRIMARY KEY,
      identity_id text NOT NULL REFERENCES ${t.identities} (id) ON DELETE CASCADE,
      last4 text NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      last_used_at timestamptz(3),
      expires_at timestamptz(3),
      seq bigint GENERATED ALWAYS AS IDENTITY
    );
    CREATE INDEX IF NOT EXISTS ${t.secretsIdentityIndex} ON ${t.secrets} (identity_id, created_at DESC, seq DESC);`,
  },
  // Rotation and revocation must see secrets that a concurrent rotation committed while
  // they waited for the identity's row lock. One plain statement cannot: its snapshot is
  // taken before the wait (READ COMMITTED), so two racing rotations would each leave the
  // other's new secret without an end. A VOLATILE function takes a fresh snapshot per
  // statement, so "lock the identity, then update its secrets" is correct, and it is
  // still ONE statement for the client: atomic, one round trip, no pinned connection.
  {
    version: 2,
    sql: (t) => `
    CREATE OR REPLACE FUNCTION ${t.rotateFunction}(
      p_identity_id text, p_digest text, p_last4 text, p_created_at timestamptz,
      p_last_used_at timestamptz, p_expires_at timestamptz, p_expire_others_at timestamptz
    ) RETURNS boolean LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      PERFORM 1 FROM ${t.identities} WHERE id = p_identity_id AND revoked_at IS NULL FOR UPDATE;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
      UPDATE ${t.secrets} SET expires_at = LEAST(coalesce(expires_at, p_expire_others_at), p_expire_others_at)
        WHERE identity_id = p_identity_id;
      INSERT INTO ${t.secrets} (digest, identity_id, last4, created_at, last_used_at, expires_at)
        VALUES (p_digest, p_identity_id, p_last4, p_created_at, p_last_used_at, p_expires_at);
      RETURN true;
    END $fn$;
    CREATE OR REPLACE FUNCTION ${t.revokeFunction}(p_identity_id text, p_at timestamptz)
    RETURNS boolean LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      -- revoked_at keeps the first revocation time; secrets only ever end earlier.
      UPDATE ${t.identities} SET revoked_at = coalesce(revoked_at, p_at) WHERE id = p_identity_id;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
      UPDATE ${t.secrets} SET expires_at = LEAST(coalesce(expires_at, p_at), p_at) WHERE identity_id = p_identity_id;
      RETURN true;
    END $fn$;`,
  },
  // At most two live secrets per identity: the current one and, during a rotation's
  // overlap, the one it replaces. Version 2 gave EVERY secret the
  // overlap, so rotating twice inside it left three keys verifying. Now only the current
  // secret (the newest still live at the rotation instant p_created_at, in getIdentity's
  // order) gets LEAST(own, p_expire_others_at); every other one ends at p_created_at.
  // Same signature and row lock as version 2, so it is still one statement, serialised with
  // concurrent rotations and revocations; the SELECT runs after the lock, on a fresh
  // snapshot. Rows whose end would not change are not written.
  {
    version: 3,
    sql: (t) => `
    CREATE OR REPLACE FUNCTION ${t.rotateFunction}(
      p_identity_id text, p_digest text, p_last4 text, p_created_at timestamptz,
      p_last_used_at timestamptz, p_expires_at timestamptz, p_expire_others_at timestamptz
    ) RETURNS boolean LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
    DECLARE
      v_current text;
    BEGIN
      PERFORM 1 FROM ${t.identities} WHERE id = p_identity_id AND revoked_at IS NULL FOR UPDATE;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
      SELECT digest INTO v_current FROM ${t.secrets}
        WHERE identity_id = p_identity_id AND (expires_at IS NULL OR expires_at > p_created_at)
        ORDER BY created_at DESC, seq DESC LIMIT 1;
      UPDATE ${t.secrets}
        SET expires_at = LEAST(
          coalesce(expires_at, CASE WHEN digest = v_current THEN p_expire_others_at ELSE p_created_at END),
          CASE WHEN digest = v_current THEN p_expire_others_at ELSE p_created_at END)
        WHERE identity_id = p_identity_id
          AND (expires_at IS NULL OR expires_at > CASE WHEN digest = v_current THEN p_expire_others_at ELSE p_created_at END);
      INSERT INTO ${t.secrets} (digest, identity_id, last4, created_at, last_used_at, expires_at)
        VALUES (p_digest, p_identity_id, p_last4, p_created_at, p_last_used_at, p_expires_at);
      RETURN true;
    END $fn$;`,
  },
  // Quota counts of createPostgresQuotaStore, one row per identity,
  // changed only by `spend_quota`: core's applyQuotaSpend as ONE statement for the client.
  // The row lock (INSERT … ON CONFLICT DO NOTHING, then SELECT … FOR UPDATE on a fresh
  // snapshot inside this VOLATILE function) serialises concurrent spends, so they never
  // spend more than there is.
  {
    version: 4,
    sql: (t) => `
    CREATE TABLE IF NOT EXISTS ${t.quotas} (
      key text PRIMARY KEY,
      generation bigint NOT NULL,
      period bigint NOT NULL,
      remaining bigint NOT NULL CHECK (remaining >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE OR REPLACE FUNCTION ${t.spendQuotaFunction}(
      p_key text, p_generation bigint, p_initial bigint, p_period bigint, p_refill bigint, p_cost bigint,
      OUT allowed boolean, OUT remaining bigint
    ) LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
    DECLARE
      v_generation bigint;
      v_period bigint;
      v_remaining bigint;
    BEGIN
      INSERT INTO ${t.quotas} (key, generation, period, remaining) VALUES (p_key, p_generation, p_period, p_initial)
        ON CONFLICT (key) DO NOTHING;
      SELECT q.generation, q.period, q.remaining INTO v_generation, v_period, v_remaining
        FROM ${t.quotas} q WHERE q.key = p_key FOR UPDATE;
      IF v_generation < p_generation THEN
        v_generation := p_generation;
        v_period := p_period;
        v_remaining := p_initial;
      ELSIF v_generation = p_generation AND p_refill IS NOT NULL AND p_period > v_period THEN
        v_period := p_period;
        v_remaining := p_refill;
      END IF;
      allowed := p_cost <= v_remaining;
      IF allowed THEN
        v_remaining := v_remaining - p_cost;
      END IF;
      remaining := v_remaining;
      UPDATE ${t.quotas} q SET generation = v_generation, period = v_period, remaining = v_remaining, updated_at = now()
        WHERE q.key = p_key
          AND (q.generation, q.period, q.remaining) IS DISTINCT FROM (v_generation, v_period, v_remaining);
    END $fn$;`,
  },
  // Key metadata, environments and IP allowlists. `prefix` NULL: a key
  // issued before this version, read as the keyring's default prefix. `metadata` is `json`,
  // not `jsonb`, so it comes back byte for byte as written (member order included), the
  // same as the memory store; its bounds are checked by the keyring before any write. The
  // allowlist holds canonical CIDR text, checked by the keyring too.
  {
    version: 5,
    sql: (t) => `
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS prefix text;
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS metadata json NOT NULL DEFAULT '{}';
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS ip_allowlist text[];`,
  },
  // Several named rate limits and a usage quota per identity.
  // `rate_limits` is the full list ([{ limit, windowSeconds, name?, burst? }]); the
  // single-limit columns of version 1 keep its first entry, so older readers still see a
  // limit. `quota` is what an administrator set: { remaining, refill, setAt (epoch ms) };
  // the count itself lives in `quotas` (version 4).
  {
    version: 6,
    sql: (t) => `
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS rate_limits jsonb CHECK (jsonb_typeof(rate_limits) = 'array');
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS quota jsonb CHECK (jsonb_typeof(quota) = 'object');
    UPDATE ${t.identities}
      SET rate_limits = jsonb_build_array(jsonb_build_object('limit', rate_limit, 'windowSeconds', rate_window_seconds))
      WHERE rate_limit IS NOT NULL AND rate_limits IS NULL;`,
  },
  // Pepper rotation: which pepper made each
  // digest. NULL: a secret written before this version (re-stamped when next used under a
  // keyring with several peppers). Rotation with a pepper id is an 8-argument overload that
  // runs the 7-argument function (whatever version last defined it) and stamps the new
  // secret, in the same transaction; the 7-argument one stays, so instances still running
  // the previous release keep rotating during a rolling upgrade (their secrets get NULL).
  {
    version: 7,
    sql: (t) => `
    ALTER TABLE ${t.secrets} ADD COLUMN IF NOT EXISTS pepper_id text;
    CREATE OR REPLACE FUNCTION ${t.rotateFunction}(
      p_identity_id text, p_digest text, p_last4 text, p_created_at timestamptz,
      p_last_used_at timestamptz, p_expires_at timestamptz, p_expire_others_at timestamptz, p_pepper_id text
    ) RETURNS boolean LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      IF NOT ${t.rotateFunction}(p_identity_id, p_digest, p_last4, p_created_at, p_last_used_at, p_expires_at, p_expire_others_at) THEN
        RETURN false;
      END IF;
      UPDATE ${t.secrets} SET pepper_id = p_pepper_id WHERE digest = p_digest;
      RETURN true;
    END $fn$;`,
  },
  // Owners: the customer several keys belong
  // to, with rate limits all of them share and metadata. `owner_id` has no foreign key:
  // deleting an owner revokes its keys in the same statement and leaves their owner_id as a
  // record of whose they were; a key that names no owner row is refused by the keyring.
  {
    version: 8,
    sql: (t) => `
    CREATE TABLE IF NOT EXISTS ${t.owners} (
      id text PRIMARY KEY,
      metadata json NOT NULL DEFAULT '{}',
      rate_limits jsonb CHECK (jsonb_typeof(rate_limits) = 'array'),
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      disabled_at timestamptz(3)
    );
    CREATE INDEX IF NOT EXISTS ${t.ownersListIndex} ON ${t.owners} (created_at DESC, id DESC);
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS owner_id text;
    CREATE INDEX IF NOT EXISTS ${t.identitiesOwnerIndex} ON ${t.identities} (owner_id, created_at DESC, id DESC) WHERE owner_id IS NOT NULL;`,
  },
  // Leaks: when a secret-scanning alert
  // first reported the key, and where it said the key was found (an http(s) URL the
  // keyring checked and cleaned of key text; NULL when none). Both NULL: never reported.
  {
    version: 9,
    sql: (t) => `
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS leaked_at timestamptz(3);
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS leak_url text CHECK (char_length(leak_url) <= 2048);`,
  },
  // Owner quotas. `owners.quota` is what an
  // administrator set, as `identities.quota` (version 6); the count lives in `quotas` under
  // `owner:<id>`. `spend_quotas` is `spend_quota` for several counts decided together, all
  // or nothing (a key's and its owner's): ONE statement for the client, the rows locked in
  // key order (so concurrent calls over the same counts never deadlock), every count
  // started or refilled as due, then every cost spent only if each count covers its own.
  {
    version: 10,
    sql: (t) => `
    ALTER TABLE ${t.owners} ADD COLUMN IF NOT EXISTS quota jsonb CHECK (jsonb_typeof(quota) = 'object');
    CREATE OR REPLACE FUNCTION ${t.spendQuotasFunction}(
      p_keys text[], p_generations bigint[], p_initials bigint[], p_periods bigint[], p_refills bigint[], p_costs bigint[]
    ) RETURNS TABLE (allowed boolean, remaining bigint) LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
    DECLARE
      n int := cardinality(p_keys);
      v_g bigint[] := '{}';
      v_p bigint[] := '{}';
      v_r bigint[] := '{}';
      v_all boolean := true;
      g bigint;
      p bigint;
      r bigint;
      i int;
    BEGIN
      INSERT INTO ${t.quotas} (key, generation, period, remaining)
        SELECT u.k, u.g, u.p, u.r FROM unnest(p_keys, p_generations, p_periods, p_initials) AS u(k, g, p, r) ORDER BY u.k
        ON CONFLICT (key) DO NOTHING;
      PERFORM 1 FROM ${t.quotas} q WHERE q.key = ANY (p_keys) ORDER BY q.key FOR UPDATE;
      FOR i IN 1 .. n LOOP
        SELECT q.generation, q.period, q.remaining INTO g, p, r FROM ${t.quotas} q WHERE q.key = p_keys[i];
        IF g < p_generations[i] THEN
          g := p_generations[i];
          p := p_periods[i];
          r := p_initials[i];
        ELSIF g = p_generations[i] AND p_refills[i] IS NOT NULL AND p_periods[i] > p THEN
          p := p_periods[i];
          r := p_refills[i];
        END IF;
        v_g[i] := g;
        v_p[i] := p;
        v_r[i] := r;
        IF p_costs[i] > r THEN
          v_all := false;
        END IF;
      END LOOP;
      FOR i IN 1 .. n LOOP
        allowed := p_costs[i] <= v_r[i];
        IF v_all THEN
          v_r[i] := v_r[i] - p_costs[i];
        END IF;
        remaining := v_r[i];
        UPDATE ${t.quotas} q SET generation = v_g[i], period = v_p[i], remaining = v_r[i], updated_at = now()
          WHERE q.key = p_keys[i]
            AND (q.generation, q.period, q.remaining) IS DISTINCT FROM (v_g[i], v_p[i], v_r[i]);
        RETURN NEXT;
      END LOOP;
    END $fn$;`,
  },
  // The audit log: one row per administrative change, inserted by the key
  // store in the same statement as the change (so one transaction). `changes` is `json`, kept
  // as written (member order included). Rows are never updated: a trigger refuses it, so
  // not even a mistaken UPDATE can rewrite history; DELETE stays for retention (prune).
  {
    version: 11,
    sql: (t) => `
    CREATE TABLE IF NOT EXISTS ${t.audit} (
      id text PRIMARY KEY,
      at timestamptz(3) NOT NULL,
      actor text NOT NULL,
      action text NOT NULL,
      target_type text NOT NULL CHECK (target_type IN ('key', 'owner')),
      target_id text NOT NULL,
      changes json NOT NULL,
      request_id text
    );
    CREATE INDEX IF NOT EXISTS ${t.auditListIndex} ON ${t.audit} (at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS ${t.auditTargetIndex} ON ${t.audit} (target_id, at DESC, id DESC);
    CREATE OR REPLACE FUNCTION ${t.auditAppendOnlyFunction}() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      RAISE EXCEPTION 'the keyset audit log is append-only';
    END $fn$;
    DROP TRIGGER IF EXISTS ${t.auditAppendOnlyTrigger} ON ${t.audit};
    CREATE TRIGGER ${t.auditAppendOnlyTrigger} BEFORE UPDATE ON ${t.audit} FOR EACH ROW EXECUTE FUNCTION ${t.auditAppendOnlyFunction}();`,
  },
  // Usage counts of createPostgresUsageStore: one row per bucket size
  // (`span`: 1 minute, 2 hour, 3 day), key and bucket start, with a count per outcome and
  // the credits spent. Every flush adds to the rows (INSERT … ON CONFLICT DO UPDATE SET
  // n = n + EXCLUDED.n), so instances never overwrite each other. `owner_id` is the key's
  // owner when the row was last written; an owner's usage is the sum of its keys' rows.
  // The primary key serves a key's reads, the partial index an owner's. `top` and `prune`
  // read every key's rows in a time range: a BRIN index on `bucket` (a few pages for
  // millions of rows, since rows are written roughly in time order) spares them a scan of
  // the whole table without a B-tree entry per row.
  {
    version: 12,
    sql: (t) => `
    CREATE TABLE IF NOT EXISTS ${t.usage} (
      span smallint NOT NULL CHECK (span IN (1, 2, 3)),
      key_id text NOT NULL,
      bucket timestamptz NOT NULL,
      owner_id text,
      allowed bigint NOT NULL DEFAULT 0,
      rate_limited bigint NOT NULL DEFAULT 0,
      quota_exhausted bigint NOT NULL DEFAULT 0,
      insufficient_scope bigint NOT NULL DEFAULT 0,
      concurrency_limited bigint NOT NULL DEFAULT 0,
      unavailable bigint NOT NULL DEFAULT 0,
      credits bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (span, key_id, bucket)
    );
    CREATE INDEX IF NOT EXISTS ${t.usageOwnerIndex} ON ${t.usage} (owner_id, span, bucket) WHERE owner_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ${t.usageBucketIndex} ON ${t.usage} USING brin (bucket);`,
  },
  // Owner incarnations, and deleting an owner serialised with issuing its keys. An owner row
  // gets a random `incarnation` when created (the column default fills existing rows, and
  // rows an older release inserts); a key records the incarnation it was issued for, and only
  // that owner row owns it, so an owner created again under a deleted id never revives the
  // deleted one's keys. Existing keys get their owner's incarnation when the owner row is not
  // newer than the key; the others (issued for an earlier owner of the id) keep NULL, which
  // the store's read gives the same rule.
  // `delete_owner` is a VOLATILE function for the reason of migration 2: the DELETE waits
  // for any key insert holding the owner row (FOR KEY SHARE), and the revocation that follows
  // must see the key that insert committed, which one plain statement's snapshot, taken
  // before the wait, would not.
  {
    version: 13,
    sql: (t) => `
    ALTER TABLE ${t.owners} ADD COLUMN IF NOT EXISTS incarnation text NOT NULL DEFAULT gen_random_uuid()::text;
    ALTER TABLE ${t.identities} ADD COLUMN IF NOT EXISTS owner_incarnation text;
    UPDATE ${t.identities} i SET owner_incarnation = o.incarnation FROM ${t.owners} o
      WHERE o.id = i.owner_id AND i.owner_incarnation IS NULL AND o.created_at <= i.created_at;
    CREATE OR REPLACE FUNCTION ${t.deleteOwnerFunction}(p_owner_id text, p_at timestamptz)
    RETURNS boolean LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      DELETE FROM ${t.owners} WHERE id = p_owner_id;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
      PERFORM ${t.revokeFunction}(i.id, p_at) FROM ${t.identities} i WHERE i.owner_id = p_owner_id AND i.revoked_at IS NULL;
      RETURN true;
    END $fn$;`,
  },
  // Exactly-once usage flushes: per counter instance, the highest flush sequence applied,
  // written by the same statement as the counts. A flush retried after its statement did
  // commit (the reply lost, or the client gave up on a server that then ran it) finds its
  // sequence reached and adds nothing. One row per instance (a counter's random id, new at
  // every start); `at` is its last flush, so rows of instances gone for a week are pruned.
  // And an index of the hour and day rows by span and bucket: `top` sums a range from its
  // coarsest rows, and the BRIN index alone would hand it every page of the range, minute
  // rows (94% of them) included. Partial, so minute rows cost it nothing.
  {
    version: 14,
    sql: (t) => `
    CREATE TABLE IF NOT EXISTS ${t.usageFlushes} (
      instance text PRIMARY KEY,
      sequence bigint NOT NULL,
      at timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS ${t.usageCoarseIndex} ON ${t.usage} (span, bucket) WHERE span > 1;`,
  },
  // Roles: permissions bundled under a name, held by keys and owners. A grant names its
  // holder by key id, or by owner incarnation (version 13), so an owner created again under
  // a deleted id holds none of the deleted one's roles. The foreign key takes a role's grants
  // with it when the role is deleted, and serialises the two: a grant's insert locks the role
  // row (FOR KEY SHARE), which the DELETE waits for, so no grant outlives its role. The
  // audit log's targets gain 'role'.
  {
    version: 15,
    sql: (t) => `
    CREATE TABLE IF NOT EXISTS ${t.roles} (
      name text PRIMARY KEY,
      permissions text[] NOT NULL,
      description text NOT NULL DEFAULT '',
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${t.roleGrants} (
      holder_type text NOT NULL CHECK (holder_type IN ('key', 'owner')),
      holder_id text NOT NULL,
      role_name text NOT NULL REFERENCES ${t.roles} (name) ON DELETE CASCADE,
      PRIMARY KEY (holder_type, holder_id, role_name)
    );
    CREATE INDEX IF NOT EXISTS ${t.roleGrantsRoleIndex} ON ${t.roleGrants} (role_name);
    ALTER TABLE ${t.audit} DROP CONSTRAINT IF EXISTS ${t.auditTargetTypeCheck};
    ALTER TABLE ${t.audit} ADD CONSTRAINT ${t.auditTargetTypeCheck} CHECK (target_type IN ('key', 'owner', 'role'));`,
  },
  // Shadow limits: requests an observed (shadow) rate limit, quota or in-flight cap would
  // have refused, served all the same, one count per reason beside the other outcomes.
  // (The limits' `mode` lives in the `rate_limits` and `quota` JSON of versions 6 and 10.)
  {
    version: 16,
    sql: (t) => `
    ALTER TABLE ${t.usage} ADD COLUMN IF NOT EXISTS would_refuse_rate_limited bigint NOT NULL DEFAULT 0;
    ALTER TABLE ${t.usage} ADD COLUMN IF NOT EXISTS would_refuse_quota_exhausted bigint NOT NULL DEFAULT 0;
    ALTER TABLE ${t.usage} ADD COLUMN IF NOT EXISTS would_refuse_concurrency_limited bigint NOT NULL DEFAULT 0;`,
  },
];

/**
 * The newest schema version `migrate()` applies: the highest listed (versions need not be
 * contiguous; each is applied on its own and recorded in `<prefix>migrations`).
 */
export const SCHEMA_VERSION: number = Math.max(...MIGRATIONS.map((m) => m.version));

/** Internal: every version `migrate()` applies, in order (for the store's tests). */
export const MIGRATION_VERSIONS: readonly number[] = Object.freeze(MIGRATIONS.map((m) => m.version));

/**
 * The migration script for these options: idempotent, one implicit transaction, guarded
 * by an advisory lock. Run it with any tool that sends it as one simple query
 * (`psql -1 -f`, node-postgres `query(text)` without parameters, PGlite `exec`).
 *
 * @example
 * ```ts
 * await writeFile('migrations/001_keyset.sql', migrationSql({ schema: 'auth' }));
 * ```
 */
export function migrationSql(options: TableOptions = {}): string {
  assertKnownOptions('migrationSql', options, TABLE_OPTIONS);
  const { schema = 'public', tablePrefix = 'keyset_' } = options;
  const t = tableNames(schema, tablePrefix);
  const steps = MIGRATIONS.map(
    ({ version, sql }) => `
DO $keyset$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM ${t.migrations} WHERE version = ${version}) THEN${sql(t)}
    INSERT INTO ${t.migrations} (version) VALUES (${version});
  END IF;
END $keyset$;`,
  );
  // Names are validated by tableNames(): safe inside quotes and string literals.
  return `-- keyset key store, schema ${t.schema}, tables ${JSON.stringify(tablePrefix)}*, version ${SCHEMA_VERSION}
SELECT pg_advisory_xact_lock(hashtext('keyset.migrate'), hashtext('${t.lockName}'));
DO $keyset$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${t.schemaName}') THEN
    CREATE SCHEMA ${t.schema};
  END IF;
END $keyset$;
CREATE TABLE IF NOT EXISTS ${t.migrations} (
  version integer PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
);${steps.join('')}
`;
}

/**
 * Creates or upgrades the store's tables. Idempotent; concurrent calls (several instances
 * starting together) wait for each other. Rejects with `KeysetError('unavailable')` when
 * the database fails, the driver error as `cause`.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool, { schema: 'auth' });
 * ```
 */
export async function migrate(client: MultiStatementQueryable, options: TableOptions = {}): Promise<void> {
  assertKnownOptions('migrate', options, TABLE_OPTIONS);
  const sql = migrationSql(options);
  // Capability, not name: PGlite's query() takes one statement, its exec() several.
  const exec = typeof client.exec === 'function' ? client.exec.bind(client) : undefined;
  await runQuery(exec === undefined ? client : { query: (text) => exec(text).then(() => ({ rows: [] })) }, sql);
}
