/**
 * Every statement the store sends goes through `runQuery`, the one place where a driver
 * failure becomes `KeysetError('unavailable')` (503): the keyring then fails closed with
 * a clear status instead of a 500, which would say the server is broken. One failure is
 * not an outage: tables, functions or columns the database does not know (never migrated, or migrated by an older
 * version) become a `ConfigError` that says to run `migrate()`. Waiting does not fix that,
 * so "unavailable, try again" would mislead, and the cause would sit two levels down.
 *
 * The driver's error stays as `cause` for logs, scrubbed first: PGlite copies the query
 * parameters onto its errors and PostgreSQL echoes key values in `detail`
 * ("Key (digest)=(…) already exists"), and a digest must never reach a log: with it, a reader of the log
 * could confirm a guessed or leaked key.
 * @module
 */
import { ConfigError, KeysetError, isKeysetError } from '@keyset/core';
import type { Queryable } from '../queryable.ts';

const REDACTED = '[redacted]';
const MAX_DEPTH = 4;
/** Shorter strings (a scope like `read`) would garble messages and are never secrets here. */
const MIN_REDACTED_LENGTH = 8;

function redactString(text: string, sensitive: readonly string[]): string {
  let out = text;
  for (const value of sensitive) if (value !== '' && out.includes(value)) out = out.split(value).join(REDACTED);
  return out;
}

function isScrubbable(value: object): boolean {
  if (value instanceof Error || Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Replaces every sensitive value in the strings of an error graph (message, stack, detail, params, cause…). */
function scrub(value: unknown, sensitive: readonly string[], seen: Set<object>, depth: number): unknown {
  if (typeof value === 'string') return redactString(value, sensitive);
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || seen.has(value) || !isScrubbable(value)) {
    return value;
  }
  seen.add(value);
  // Arrays may be the caller's own parameter list (PGlite attaches it as `params`): copy.
  if (Array.isArray(value)) return value.map((item) => scrub(item, sensitive, seen, depth + 1));
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || !('value' in descriptor || descriptor.get !== undefined)) continue;
    let current: unknown;
    try {
      current = (value as Record<PropertyKey, unknown>)[key];
    } catch {
      continue;
    }
    const next = scrub(current, sensitive, seen, depth + 1);
    if (next === current) continue;
    try {
      (value as Record<PropertyKey, unknown>)[key] = next;
    } catch {
      if (descriptor.configurable === true) {
        Object.defineProperty(value, key, { value: next, writable: true, enumerable: descriptor.enumerable ?? false, configurable: true });
      }
    }
  }
  return value;
}

/** Collects the string parameters worth redacting, including inside arrays (batched `unnest` parameters). */
function stringsOf(params: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const param of params) {
    if (typeof param === 'string' && param.length >= MIN_REDACTED_LENGTH) out.push(param);
    else if (Array.isArray(param)) out.push(...stringsOf(param));
  }
  return out;
}

/**
 * Runs one statement; resolves with its rows. Rejects with `KeysetError('unavailable')`
 * whose `cause` is the driver's error with every string parameter redacted from it.
 */
export async function runQuery(client: Queryable, text: string, params?: unknown[]): Promise<any[]> {
  try {
    const result = params === undefined ? await client.query(text) : await client.query(text, params);
    return result.rows;
  } catch (error) {
    if (isKeysetError(error)) throw error;
    // Every long string parameter is redacted, not only digests: cheap on this cold path,
    // and no parameter of this store's queries is something a log needs.
    const sensitive = params === undefined ? [] : stringsOf(params).sort((a, b) => b.length - a.length);
    const cause = sensitive.length === 0 ? error : scrub(error, sensitive, new Set(), 0);
    const missing = schemaMissing(cause);
    if (missing !== undefined) throw missing;
    throw new KeysetError('unavailable', { detail: 'The key store is unavailable.', cause });
  }
}

/**
 * SQLSTATEs that mean keyset's schema objects are not there: `undefined_table`,
 * `undefined_function`, `undefined_column`, `invalid_schema_name`. Only keyset's own
 * statements come through here, so each means `migrate()` was never run (or not since
 * this version of the package added what is missing).
 */
const SCHEMA_MISSING = new Set(['42P01', '42883', '42703', '3F000']);

/**
 * The `ConfigError` for a driver error that says keyset's tables, functions or columns do
 * not exist, else `undefined`. The database's own message names only identifiers (no
 * parameter values) and is quoted; the driver error stays as `cause`.
 */
function schemaMissing(error: unknown): ConfigError | undefined {
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || !SCHEMA_MISSING.has(code)) return undefined;
  const said = typeof message === 'string' && message.length <= 200 ? ` (the database says: ${message})` : '';
  return new ConfigError(
    `keyset's PostgreSQL tables are missing or older than this @keyset/postgres${said}: ` +
      'run `await migrate(client)` from @keyset/postgres once before serving (with the same `schema` and `tablePrefix` as the store), ' +
      'or apply `migrationSql()` with your migration tool',
    { cause: error },
  );
}
