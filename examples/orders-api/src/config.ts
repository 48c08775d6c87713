/**
 * Configuration of the orders API, read from the environment and validated once at
 * startup. Every problem is reported at once, naming the variable and what to change,
 * so a misconfigured server never starts half-way.
 * @module
 */
import type { KeyScheme, RateLimitHeaderFormat, TrustProxy } from '@keyset/core';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { CONFIG_SCHEMA, crossProblems, ENV_SCHEMAS, isSaid, RULES, type AdapterName, type LogLevel } from './config-schema.ts';

export { ADAPTERS, parseRate, type AdapterName, type LogLevel } from './config-schema.ts';

/** A per-key rate-limit policy: `limit` requests per `windowSeconds`. */
export interface RatePolicy {
  limit: number;
  windowSeconds: number;
}

/** The validated configuration of one server process. */
export interface Config {
  /** `PORT`. `0` picks a free port. @default 3000 */
  port: number;
  /** `HOST`. @default '127.0.0.1' */
  host: string;
  /** `ADAPTER`. @default 'hono' */
  adapter: AdapterName;
  /** `DATA_DIR`, absolute. @default '<examples/orders-api>/.data' */
  dataDir: string;
  /** `DATABASE_URL`: a PostgreSQL server instead of the embedded PGlite. */
  databaseUrl: string | undefined;
  /** `REDIS_URL`: rate limits and revocation shared through Redis. */
  redisUrl: string | undefined;
  /** `SEED_ORDERS`: orders created on first start. @default 10000 */
  seedOrders: number;
  /** `CURSOR_SECRETS` (comma-separated, first signs) or `CURSOR_SECRET`; else `DATA_DIR/cursor.secret`. */
  cursorSecrets: readonly string[] | undefined;
  /**
   * `CURSOR_TTL_SECONDS`: how long a cursor stays valid after it was issued; an older one is
   * 400 `invalid_cursor` ("expired"), so a cursor copied into a log or a link does not page
   * forever. @default 86400 (one day)
   */
  cursorTtlSeconds: number;
  /** `KEY_PREFIX`: the prefix of every issued key. @default 'ks_live' */
  keyPrefix: string;
  /**
   * `KEY_PEPPERS` (comma-separated, newest first) or `KEY_PEPPER`: HMAC peppers for key
   * digests. Keys are issued under the first and re-hashed under it when used; drop an
   * old one when `keys peppers` shows 0 keys on it (docs/api-keys.md, "Rotating the pepper").
   */
  keyPepper: string | readonly string[] | undefined;
  /** `RATE_LIMIT`: the policy of keys without their own, e.g. `100/1s`. @default 100/1s */
  rateLimit: RatePolicy;
  /**
   * `REFUSED_KEY_LIMIT`: how many refused keys (`invalid_api_key`) one client address may
   * send, e.g. `60/1m`; past it every request from that address is 429 until there is
   * room again, before any key lookup (docs/rate-limits.md, "Refused credentials").
   * Shared between instances with `REDIS_URL`. `off` turns it off.
   * @default 60/1m
   */
  refusedKeyLimit: RatePolicy | false;
  /**
   * `IN_FLIGHT_MAX`: how many requests of one key may be at work at once, on all instances
   * together with `REDIS_URL`; past it the request is 429 `concurrency_limited` with
   * `Retry-After` (docs/rate-limits.md, "In-flight limits"). `off` (the default): no cap.
   * @default false
   */
  inFlightMax: number | false;
  /**
   * `OWNER_IN_FLIGHT_MAX`: the same for all the keys of one owner together (`/api/owners`);
   * keys without an owner are not counted. `off` (the default): no cap.
   * @default false
   */
  ownerInFlightMax: number | false;
  /**
   * `IN_FLIGHT_LEASE_SECONDS`: how long an in-flight lease lasts when it is never given
   * back (its instance died): the customer is admitted again after it. Set it above your
   * slowest request; a request still at work when its lease ends stops counting. With a
   * cap and `DATABASE_URL`, refused when shorter than `DATABASE_QUERY_TIMEOUT_MS`.
   * @default 60
   */
  inFlightLeaseSeconds: number;
  /**
   * `USAGE_FLUSH_MS`: how often each instance writes the usage counts it added up in memory
   * (one statement per flush, docs/usage.md). What a crash loses is at most the requests of
   * one interval; a shorter one writes more often. From 10 to 3600000.
   * @default 5000
   */
  usageFlushMs: number;
  /**
   * `MAX_OFFSET`: the largest `offset` the list endpoints serve; a larger one is 400
   * `offset_too_large` with `max_offset`, before any query runs. An offset page costs
   * time in proportion to its offset, even as a deferred join (docs/pagination.md, "Deep
   * offset pages"); a cursor walks any depth at the same cost. `off` (the default): any
   * offset.
   * @default false
   */
  maxOffset: number | false;
  /**
   * `AUDIT_RETENTION_DAYS`: how long the audit log keeps an entry (docs/audit.md); older
   * ones are pruned at start and hourly. `off`: kept forever.
   * @default 365
   */
  auditRetentionDays: number | false;
  /**
   * `RATE_LIMIT_HEADERS`: how responses state a key's rate limit, comma-separated:
   * `draft-11` (`RateLimit-Policy` and `RateLimit` per draft-ietf-httpapi-ratelimit-headers-11),
   * `draft-7` (`RateLimit: limit=…, remaining=…, reset=…` and `RateLimit-Policy`, as
   * express-rate-limit sends and most client libraries, e.g. ratelimit-header-parser, read),
   * `legacy` (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in Unix seconds). `legacy` goes
   * with either draft; the two drafts share header names, so not both.
   * @default ['draft-11']
   */
  rateLimitHeaders: readonly RateLimitHeaderFormat[];
  /**
   * `PUBLIC_BASE_URL` (`PUBLIC_URL` is accepted as an alias): the external origin, with an
   * optional path, of every `Link` header, e.g. `https://api.example.com`. Without it the
   * origin comes from the request's `Host` (see docs/security.md).
   */
  publicUrl: string | undefined;
  /**
   * `DATABASE_QUERY_TIMEOUT_MS`: with `DATABASE_URL`, the longest a query may take. PostgreSQL
   * cancels a statement running longer (`statement_timeout`), and the pool gives up on a
   * server that has not answered 500 ms after that, e.g. one stopped or cut off with its
   * connections still open (node-postgres `query_timeout`; that connection is dropped).
   * Either way the request gets 503 `unavailable`. Also bounds opening a connection.
   * `0` turns the bound off (not recommended). Not used with the embedded PGlite.
   * @default 5000
   */
  databaseQueryTimeoutMs: number;
  /**
   * `TRUST_PROXY`: which proxies may tell the client's address in `X-Forwarded-For`, for
   * IP allowlists and per-address limits. Unset or `false`: none, the socket's peer is the
   * client. A number (`1`): that many proxies you run in front, the client is that many
   * entries from the right. CIDR blocks (`10.0.0.0/8,fd00::/8`): every hop from those
   * addresses is a proxy. Never trust a header no proxy of yours overwrites: a client
   * could claim any address (docs/security.md).
   * @default false
   */
  trustProxy: TrustProxy;
  /**
   * `KEY_SCHEMES`: where requests may carry their key, a comma list of `ApiKey`
   * (`Authorization: ApiKey <key>`), `Bearer` (`Authorization: Bearer <key>`) and
   * `X-API-Key` (an `X-API-Key: <key>` header). A form not listed is told where the key
   * goes (401 `unsupported_auth_scheme`); keys in the query string are refused whatever
   * this says. The OpenAPI document at `/openapi.json` lists the same schemes.
   * @default ['ApiKey']
   */
  keySchemes: readonly KeyScheme[];
  /**
   * `LEAK_ALERT_PATH`: where GitHub's secret-scanning alerts are accepted, e.g.
   * `/secret-scanning/github` (docs/security.md, "The alert endpoint"). Unset: no endpoint.
   */
  leakAlertPath: string | undefined;
  /**
   * `LEAK_ALERT_KEYS_URL`: where the keys that sign alerts are published.
   * @default 'https://api.github.com/meta/public_keys/secret_scanning'
   */
  leakAlertKeysUrl: string;
  /**
   * `LEAK_ALERT_POLICY`: `revoke` ends a reported key at once, on every instance, before
   * GitHub gets its answer; `mark` leaves it live and logs a warning with its id.
   * @default 'revoke'
   */
  leakAlertPolicy: 'revoke' | 'mark';
  /** `LOG_LEVEL`. @default 'info' */
  logLevel: LogLevel;
  /**
   * `METRICS_PORT`: serve keyset's metrics in the Prometheus text format at `GET /metrics`
   * on this port (on `HOST`, a listener of its own; `0` picks a free port). Unset: none.
   */
  metricsPort: number | undefined;
  /**
   * `OTEL_EXPORTER_OTLP_ENDPOINT`: push metrics and spans over OTLP/HTTP to this collector
   * (the exporters read it and the other `OTEL_EXPORTER_OTLP_*` variables themselves). Unset: none.
   */
  otlpEndpoint: string | undefined;
}

/** Options of `createOrdersApi`: any subset of `Config`; the rest takes defaults. */
export type ConfigInput = Partial<Config>;

/** The configuration is invalid; `problems` lists one line per variable. */
export class ConfigurationError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigurationError';
    this.problems = problems;
  }
}

/** The example's own directory: `.data/` lives here unless `DATA_DIR` says otherwise. */
export const EXAMPLE_DIR: string = fileURLToPath(new URL('..', import.meta.url));

export const DEFAULTS: Readonly<Omit<Config, 'databaseUrl' | 'redisUrl' | 'cursorSecrets' | 'keyPepper' | 'publicUrl' | 'leakAlertPath' | 'metricsPort' | 'otlpEndpoint'>> =
  Object.freeze({
    port: 3000,
    host: '127.0.0.1',
    adapter: 'hono',
    dataDir: resolve(EXAMPLE_DIR, '.data'),
    seedOrders: 10_000,
    cursorTtlSeconds: 86_400,
    keyPrefix: 'ks_live',
    leakAlertKeysUrl: 'https://api.github.com/meta/public_keys/secret_scanning',
    leakAlertPolicy: 'revoke',
    rateLimit: Object.freeze({ limit: 100, windowSeconds: 1 }),
    refusedKeyLimit: Object.freeze({ limit: 60, windowSeconds: 60 }),
    inFlightMax: false,
    ownerInFlightMax: false,
    inFlightLeaseSeconds: 60,
    usageFlushMs: 5_000,
    maxOffset: false,
    auditRetentionDays: 365,
    rateLimitHeaders: Object.freeze(['draft-11'] as const),
    databaseQueryTimeoutMs: 5_000,
    trustProxy: false,
    keySchemes: Object.freeze(['ApiKey'] as const),
    logLevel: 'info',
  });

/** Settings whose value is never quoted in a problem: secrets, and URLs that may hold a password. */
const UNQUOTED: ReadonlySet<string> = new Set(['cursorSecrets', 'keyPepper', 'databaseUrl', 'redisUrl']);

/** One problem line per setting that breaks its rule (in `RULES`' words), plus what a check of its own says. */
function problemsOf(error: z.ZodError, given: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const named = new Set<string>();
  for (const issue of error.issues) {
    const field = String(issue.path[0]) as keyof typeof RULES;
    if (isSaid(issue)) problems.push(issue.message);
    else if (!named.has(field)) problems.push(UNQUOTED.has(field) ? RULES[field] : `${RULES[field]}, got ${shown(given[field])}`);
    named.add(field);
  }
  return [...new Set(problems)];
}

function shown(value: unknown): string {
  if (typeof value === 'string') return `"${value}"`;
  return Array.isArray(value) ? `"${value.join(',')}"` : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/**
 * Reads and validates the configuration from `env`. Relative `DATA_DIR`s resolve
 * against the directory `pnpm` was invoked from (`INIT_CWD`), else the process cwd.
 *
 * @example
 * ```ts
 * const config = loadConfig(process.env); // throws ConfigurationError listing every problem
 * ```
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const input: Record<string, unknown> = {};
  for (const [name, [field, schema]] of Object.entries(ENV_SCHEMAS)) {
    const text = read(name);
    if (text === undefined) continue;
    const parsed = schema.safeParse(text);
    // A variable refused here is left out of `input`, so the rest is still checked below.
    if (parsed.success) input[field] = parsed.data;
    else problems.push(`${RULES[field]}, got "${text}"`);
  }
  const dataDir = read('DATA_DIR');
  if (dataDir !== undefined) input.dataDir = isAbsolute(dataDir) ? dataDir : resolve(env.INIT_CWD || process.cwd(), dataDir);
  const secrets = read('CURSOR_SECRETS') ?? read('CURSOR_SECRET');
  if (secrets !== undefined) input.cursorSecrets = secrets.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const [pepper, peppers] = [read('KEY_PEPPER'), read('KEY_PEPPERS')];
  if (pepper !== undefined && peppers !== undefined) problems.push('KEY_PEPPER and KEY_PEPPERS are both set: keep KEY_PEPPERS alone (newest first, the old KEY_PEPPER after it)');
  else if (peppers !== undefined) input.keyPepper = peppers.split(',').map((s) => s.trim());
  else if (pepper !== undefined) input.keyPepper = pepper;
  // PUBLIC_BASE_URL is the documented name; PUBLIC_URL, the earlier one, still works.
  const [publicBaseUrl, publicUrlAlias] = [read('PUBLIC_BASE_URL'), read('PUBLIC_URL')];
  if (publicBaseUrl !== undefined && publicUrlAlias !== undefined && publicBaseUrl !== publicUrlAlias) {
    problems.push(`PUBLIC_BASE_URL and its alias PUBLIC_URL are both set, to different URLs ("${publicBaseUrl}", "${publicUrlAlias}"); set PUBLIC_BASE_URL only`);
  } else if ((publicBaseUrl ?? publicUrlAlias) !== undefined) {
    input.publicUrl = publicBaseUrl ?? publicUrlAlias;
  }
  try {
    // The problems found so far must win over a config the rest would resolve to.
    const config = resolveConfig(input as ConfigInput);
    if (problems.length === 0) return config;
  } catch (error) {
    if (error instanceof ConfigurationError) problems.push(...error.problems);
    else throw error;
  }
  throw new ConfigurationError(problems);
}

/**
 * Fills defaults into a partial configuration and validates it (used by `loadConfig`
 * and by `createOrdersApi` for programmatic callers such as tests).
 *
 * @example
 * ```ts
 * const config = resolveConfig({ port: 0, dataDir: '/tmp/orders', seedOrders: 500 });
 * ```
 */
export function resolveConfig(input: ConfigInput = {}): Config {
  const given: Record<string, unknown> = { ...DEFAULTS, ...stripUndefined(input) };
  const parsed = CONFIG_SCHEMA.safeParse(given);
  const problems = parsed.success ? [] : problemsOf(parsed.error, given);
  const failed = new Set(parsed.success ? [] : parsed.error.issues.map((issue) => String(issue.path[0])));
  problems.push(...crossProblems(given as z.input<typeof CONFIG_SCHEMA>, (field) => !failed.has(field)));
  if (!parsed.success || problems.length > 0) throw new ConfigurationError(problems);
  const unset = { databaseUrl: undefined, redisUrl: undefined, cursorSecrets: undefined, keyPepper: undefined, publicUrl: undefined, leakAlertPath: undefined, metricsPort: undefined, otlpEndpoint: undefined };
  return { ...unset, ...parsed.data } as Config;
}

function stripUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
