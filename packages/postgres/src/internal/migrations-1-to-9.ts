/**
 * Schema versions 1 to 9: identities and their secrets, rotation and revocation as
 * functions, quota counts, metadata and allowlists, named limits, pepper ids, owners and
 * leaks. Listed in order by `migrate.ts`; a version, once released, never changes.
 * @module
 */
import type { Migration } from './migration.ts';

// Timestamps are timestamptz(3): exactly the precision of a JS Date, so every value the
// store reads back equals what it wrote, and a keyset cursor built from a Date is exact.
// A microsecond value written by other SQL (e.g. `now()`) is rounded once, on write.
export const MIGRATIONS_1_TO_9: readonly Migration[] = [
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
];
