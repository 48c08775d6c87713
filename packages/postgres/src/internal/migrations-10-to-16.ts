/**
 * Schema versions 10 to 16: owner quotas, the audit log, usage counts, owner incarnations,
 * exactly-once usage flushes, roles and shadow-limit usage counts. Listed in order by `migrate.ts`; a version, once
 * released, never changes. A new version goes at the end of the newest such file.
 * @module
 */
import type { Migration } from './migration.ts';

export const MIGRATIONS_10_TO_16: readonly Migration[] = [
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
