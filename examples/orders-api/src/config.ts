/**
 * Configuration of the orders API, read from the environment and validated once at
 * startup. Every problem is reported at once, naming the variable and what to change,
 * so a misconfigured server never starts half-way.
 * @module
 */
import { ConfigError, createClientAddressResolver, KEY_SCHEMES, type KeyScheme, type RateLimitHeaderFormat, type TrustProxy } from '@keyset/core';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Adapters the example can serve through (`ADAPTER`), each with identical behaviour. */
export const ADAPTERS = Object.freeze(['hono', 'express', 'fastify', 'fetch'] as const);
export type AdapterName = (typeof ADAPTERS)[number];

/** pino levels accepted by `LOG_LEVEL`. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

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

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const RATE_LIMIT_HEADER_FORMATS: readonly RateLimitHeaderFormat[] = ['draft-11', 'draft-7', 'legacy'];
const MAX_SEED = 1_000_000;
const MIN_SECRET_LENGTH = 32;
const MIN_QUERY_TIMEOUT_MS = 100;
const MAX_QUERY_TIMEOUT_MS = 3_600_000;
const MAX_IN_FLIGHT = 1_000_000;
const MAX_LEASE_SECONDS = 86_400;
/** The longest `USAGE_FLUSH_MS`: an hour, the counter's own bound. */
const MAX_USAGE_FLUSH_MS = 3_600_000;
/** Fifteen digits: any offset a client can send, since `offset` itself stops at 2^53 − 1. */
const MAX_OFFSET = 999_999_999_999_999;
/** Longest audit retention: 100 years, past which "off" says what is meant. */
const MAX_AUDIT_RETENTION_DAYS = 36_500;
const UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Parses a rate such as `100/1s`, `600/m`, `10/30s` into a policy, or `undefined`.
 *
 * @example
 * ```ts
 * parseRate('100/1s'); // { limit: 100, windowSeconds: 1 }
 * ```
 */
export function parseRate(text: string): RatePolicy | undefined {
  const match = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,6})?(s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const [, limit, count = '1', unit = 's'] = match;
  return { limit: Number(limit), windowSeconds: Number(count) * (UNITS[unit] ?? 1) };
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
  const input: ConfigInput = {};

  const port = read('PORT');
  if (port !== undefined) {
    if (/^(0|[1-9][0-9]{0,4})$/.test(port) && Number(port) <= 65_535) input.port = Number(port);
    else problems.push(`PORT must be an integer from 0 to 65535, got "${port}"`);
  }
  const host = read('HOST');
  if (host !== undefined) input.host = host;
  const adapter = read('ADAPTER');
  if (adapter !== undefined) {
    if (isAdapter(adapter)) input.adapter = adapter;
    else problems.push(adapterProblem(adapter));
  }
  const dataDir = read('DATA_DIR');
  if (dataDir !== undefined) {
    input.dataDir = isAbsolute(dataDir) ? dataDir : resolve(env.INIT_CWD || process.cwd(), dataDir);
  }
  const databaseUrl = read('DATABASE_URL');
  if (databaseUrl !== undefined) input.databaseUrl = databaseUrl;
  const redisUrl = read('REDIS_URL');
  if (redisUrl !== undefined) input.redisUrl = redisUrl;
  const seed = read('SEED_ORDERS');
  if (seed !== undefined) {
    if (/^(0|[1-9][0-9]*)$/.test(seed)) input.seedOrders = Number(seed);
    else problems.push(`SEED_ORDERS must be a whole number from 0 to ${MAX_SEED}, got "${seed}"`);
  }
  const secrets = read('CURSOR_SECRETS') ?? read('CURSOR_SECRET');
  if (secrets !== undefined) input.cursorSecrets = secrets.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const cursorTtl = read('CURSOR_TTL_SECONDS');
  if (cursorTtl !== undefined) {
    if (/^[1-9][0-9]{0,8}$/.test(cursorTtl)) input.cursorTtlSeconds = Number(cursorTtl);
    else problems.push(`CURSOR_TTL_SECONDS must be a whole number of seconds from 1 to 999999999, got "${cursorTtl}"`);
  }
  const prefix = read('KEY_PREFIX');
  if (prefix !== undefined) input.keyPrefix = prefix;
  const pepper = read('KEY_PEPPER');
  const peppers = read('KEY_PEPPERS');
  if (pepper !== undefined && peppers !== undefined) problems.push('KEY_PEPPER and KEY_PEPPERS are both set: keep KEY_PEPPERS alone (newest first, the old KEY_PEPPER after it)');
  else if (peppers !== undefined) input.keyPepper = peppers.split(',').map((s) => s.trim());
  else if (pepper !== undefined) input.keyPepper = pepper;
  const rate = read('RATE_LIMIT');
  if (rate !== undefined) {
    const policy = parseRate(rate);
    if (policy) input.rateLimit = policy;
    else problems.push(`RATE_LIMIT must look like "100/1s", "600/1m" or "10000/1h", got "${rate}"`);
  }
  const refused = read('REFUSED_KEY_LIMIT');
  if (refused !== undefined) {
    const policy = refused === 'off' ? false : parseRate(refused);
    if (policy !== undefined) input.refusedKeyLimit = policy;
    else problems.push(`REFUSED_KEY_LIMIT must look like "60/1m" or "10/1s", or be "off", got "${refused}"`);
  }
  for (const [name, field] of [['IN_FLIGHT_MAX', 'inFlightMax'], ['OWNER_IN_FLIGHT_MAX', 'ownerInFlightMax']] as const) {
    const max = read(name);
    if (max === undefined) continue;
    if (max === 'off') input[field] = false;
    else if (/^[1-9][0-9]{0,6}$/.test(max) && Number(max) <= MAX_IN_FLIGHT) input[field] = Number(max);
    else problems.push(`${name} must be a whole number of requests from 1 to ${MAX_IN_FLIGHT}, or "off", got "${max}"`);
  }
  const lease = read('IN_FLIGHT_LEASE_SECONDS');
  if (lease !== undefined) {
    if (/^[1-9][0-9]{0,4}$/.test(lease) && Number(lease) <= MAX_LEASE_SECONDS) input.inFlightLeaseSeconds = Number(lease);
    else problems.push(`IN_FLIGHT_LEASE_SECONDS must be a whole number of seconds from 1 to ${MAX_LEASE_SECONDS}, got "${lease}"`);
  }
  const metricsPort = read('METRICS_PORT');
  if (metricsPort !== undefined) {
    if (/^(0|[1-9][0-9]{0,4})$/.test(metricsPort) && Number(metricsPort) <= 65_535) input.metricsPort = Number(metricsPort);
    else problems.push(`METRICS_PORT must be an integer from 0 to 65535, got "${metricsPort}"`);
  }
  const otlpEndpoint = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (otlpEndpoint !== undefined) input.otlpEndpoint = otlpEndpoint;
  const usageFlush = read('USAGE_FLUSH_MS');
  if (usageFlush !== undefined) {
    if (/^[1-9][0-9]{1,6}$/.test(usageFlush) && Number(usageFlush) <= MAX_USAGE_FLUSH_MS) input.usageFlushMs = Number(usageFlush);
    else problems.push(`USAGE_FLUSH_MS must be a whole number of milliseconds from 10 to ${MAX_USAGE_FLUSH_MS}, got "${usageFlush}"`);
  }
  const maxOffset = read('MAX_OFFSET');
  if (maxOffset !== undefined) {
    if (maxOffset === 'off') input.maxOffset = false;
    else if (/^(0|[1-9][0-9]{0,14})$/.test(maxOffset)) input.maxOffset = Number(maxOffset);
    else problems.push(`MAX_OFFSET must be a whole number of rows from 0 to ${MAX_OFFSET}, or "off", got "${maxOffset}"`);
  }
  const retention = read('AUDIT_RETENTION_DAYS');
  if (retention !== undefined) {
    if (retention === 'off') input.auditRetentionDays = false;
    else if (/^[1-9][0-9]{0,4}$/.test(retention) && Number(retention) <= MAX_AUDIT_RETENTION_DAYS) input.auditRetentionDays = Number(retention);
    else problems.push(`AUDIT_RETENTION_DAYS must be a whole number of days from 1 to ${MAX_AUDIT_RETENTION_DAYS}, or "off", got "${retention}"`);
  }
  const headerFormats = read('RATE_LIMIT_HEADERS');
  if (headerFormats !== undefined) input.rateLimitHeaders = headerFormats.split(',').map((f) => f.trim()) as RateLimitHeaderFormat[];
  // PUBLIC_BASE_URL is the documented name; PUBLIC_URL, the earlier one, still works.
  const publicBaseUrl = read('PUBLIC_BASE_URL');
  const publicUrlAlias = read('PUBLIC_URL');
  if (publicBaseUrl !== undefined && publicUrlAlias !== undefined && publicBaseUrl !== publicUrlAlias) {
    problems.push(`PUBLIC_BASE_URL and its alias PUBLIC_URL are both set, to different URLs ("${publicBaseUrl}", "${publicUrlAlias}"); set PUBLIC_BASE_URL only`);
  } else if ((publicBaseUrl ?? publicUrlAlias) !== undefined) {
    input.publicUrl = publicBaseUrl ?? publicUrlAlias;
  }
  const queryTimeout = read('DATABASE_QUERY_TIMEOUT_MS');
  if (queryTimeout !== undefined) {
    if (/^(0|[1-9][0-9]{0,8})$/.test(queryTimeout)) input.databaseQueryTimeoutMs = Number(queryTimeout);
    else problems.push(`DATABASE_QUERY_TIMEOUT_MS must be a whole number of milliseconds from ${MIN_QUERY_TIMEOUT_MS} to ${MAX_QUERY_TIMEOUT_MS}, or 0 for none, got "${queryTimeout}"`);
  }
  const trust = read('TRUST_PROXY');
  if (trust !== undefined) {
    if (trust === 'false' || trust === '0') input.trustProxy = false;
    else if (/^[0-9]+$/.test(trust)) input.trustProxy = { hops: Number(trust) };
    else input.trustProxy = { cidrs: trust.split(',').map((block) => block.trim()).filter((block) => block !== '') };
  }
  const schemes = read('KEY_SCHEMES');
  if (schemes !== undefined) input.keySchemes = schemes.split(',').map((s) => s.trim()) as KeyScheme[];
  const leakPath = read('LEAK_ALERT_PATH');
  if (leakPath !== undefined) input.leakAlertPath = leakPath;
  const leakKeys = read('LEAK_ALERT_KEYS_URL');
  if (leakKeys !== undefined) input.leakAlertKeysUrl = leakKeys;
  const leakPolicy = read('LEAK_ALERT_POLICY');
  if (leakPolicy !== undefined) input.leakAlertPolicy = leakPolicy as Config['leakAlertPolicy'];
  const level = read('LOG_LEVEL');
  if (level !== undefined) {
    if ((LOG_LEVELS as readonly string[]).includes(level)) input.logLevel = level as LogLevel;
    else problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  }

  try {
    // A variable refused above is not in `input`, so the rest may still resolve: the
    // problems found so far must win over that config.
    const config = resolveConfig(input);
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
  const config: Config = {
    ...DEFAULTS,
    databaseUrl: undefined,
    redisUrl: undefined,
    cursorSecrets: undefined,
    keyPepper: undefined,
    publicUrl: undefined,
    leakAlertPath: undefined,
    metricsPort: undefined,
    otlpEndpoint: undefined,
    ...stripUndefined(input),
  };
  const problems: string[] = [];
  if (config.leakAlertPath !== undefined && !/^\/[A-Za-z0-9._~\/-]*$/.test(config.leakAlertPath)) {
    problems.push(`LEAK_ALERT_PATH must be a path such as /secret-scanning/github (letters, digits, / . _ ~ -), got "${config.leakAlertPath}"`);
  }
  if (!/^https?:\/\/./.test(config.leakAlertKeysUrl)) problems.push(`LEAK_ALERT_KEYS_URL must be an http(s) URL, got "${config.leakAlertKeysUrl}"`);
  if (config.leakAlertPolicy !== 'revoke' && config.leakAlertPolicy !== 'mark') {
    problems.push(`LEAK_ALERT_POLICY must be revoke or mark, got "${String(config.leakAlertPolicy)}"`);
  }
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65_535) {
    problems.push(`PORT must be an integer from 0 to 65535, got ${String(config.port)}`);
  }
  if (config.metricsPort !== undefined && (!Number.isInteger(config.metricsPort) || config.metricsPort < 0 || config.metricsPort > 65_535)) {
    problems.push(`METRICS_PORT must be an integer from 0 to 65535, got ${String(config.metricsPort)}`);
  }
  if (config.metricsPort !== undefined && config.metricsPort !== 0 && config.metricsPort === config.port) {
    problems.push(`METRICS_PORT must differ from PORT (${config.port}): metrics have a listener of their own`);
  }
  if (config.otlpEndpoint !== undefined && !/^https?:\/\/./.test(config.otlpEndpoint)) {
    problems.push(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL such as http://localhost:4318, got "${config.otlpEndpoint}"`);
  }
  if (!isAdapter(config.adapter)) problems.push(adapterProblem(config.adapter));
  if (!isAbsolute(config.dataDir)) config.dataDir = resolve(config.dataDir);
  if (config.databaseUrl !== undefined && !/^postgres(ql)?:\/\/./.test(config.databaseUrl)) {
    problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  }
  if (config.redisUrl !== undefined && !/^rediss?:\/\/./.test(config.redisUrl)) {
    problems.push('REDIS_URL must start with redis:// or rediss://');
  }
  const timeout = config.databaseQueryTimeoutMs;
  if (!Number.isSafeInteger(timeout) || (timeout !== 0 && (timeout < MIN_QUERY_TIMEOUT_MS || timeout > MAX_QUERY_TIMEOUT_MS))) {
    problems.push(`DATABASE_QUERY_TIMEOUT_MS must be a whole number of milliseconds from ${MIN_QUERY_TIMEOUT_MS} to ${MAX_QUERY_TIMEOUT_MS}, or 0 for none, got ${String(timeout)}`);
  }
  if (!Number.isSafeInteger(config.seedOrders) || config.seedOrders < 0 || config.seedOrders > MAX_SEED) {
    problems.push(`SEED_ORDERS must be a whole number from 0 to ${MAX_SEED}, got ${String(config.seedOrders)}`);
  }
  if (config.cursorSecrets !== undefined) {
    if (config.cursorSecrets.length === 0) problems.push('CURSOR_SECRETS is set but holds no secret');
    config.cursorSecrets.forEach((secret, i) => {
      if (secret.length < MIN_SECRET_LENGTH) {
        problems.push(`CURSOR_SECRETS entry ${i + 1} is ${secret.length} characters; use at least ${MIN_SECRET_LENGTH} random characters (openssl rand -base64 32)`);
      }
    });
  }
  if (!/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(config.keyPrefix) || config.keyPrefix.length > 32) {
    problems.push(`KEY_PREFIX must be lowercase letters and digits separated by single underscores (e.g. "acme_live"), got "${config.keyPrefix}"`);
  }
  if (typeof config.keyPepper === 'string' && config.keyPepper.length < MIN_SECRET_LENGTH) {
    problems.push(`KEY_PEPPER must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  if (Array.isArray(config.keyPepper)) {
    const list: readonly string[] = config.keyPepper;
    list.forEach((p, n) => {
      if (p.length < MIN_SECRET_LENGTH) problems.push(`KEY_PEPPERS entry ${n + 1} must be at least ${MIN_SECRET_LENGTH} characters`);
      else if (list.indexOf(p) !== n) problems.push(`KEY_PEPPERS entry ${n + 1} repeats entry ${list.indexOf(p) + 1}`);
    });
  }
  const { limit, windowSeconds } = config.rateLimit;
  if (!Number.isSafeInteger(limit) || limit < 1 || !(windowSeconds > 0) || !Number.isFinite(windowSeconds)) {
    problems.push('RATE_LIMIT must have a positive integer limit and a positive window');
  }
  if (config.refusedKeyLimit !== false) {
    const refusedLimit = config.refusedKeyLimit;
    if (!Number.isSafeInteger(refusedLimit.limit) || refusedLimit.limit < 1 || !(refusedLimit.windowSeconds > 0) || !Number.isFinite(refusedLimit.windowSeconds)) {
      problems.push('REFUSED_KEY_LIMIT must have a positive integer limit and a positive window, or be "off"');
    }
  }
  for (const [name, max] of [['IN_FLIGHT_MAX', config.inFlightMax], ['OWNER_IN_FLIGHT_MAX', config.ownerInFlightMax]] as const) {
    if (max !== false && !(Number.isSafeInteger(max) && max >= 1 && max <= MAX_IN_FLIGHT)) {
      problems.push(`${name} must be a whole number of requests from 1 to ${MAX_IN_FLIGHT}, or "off", got ${String(max)}`);
    }
  }
  const days = config.auditRetentionDays;
  if (days !== false && !(Number.isSafeInteger(days) && days >= 1 && days <= MAX_AUDIT_RETENTION_DAYS)) {
    problems.push(`AUDIT_RETENTION_DAYS must be a whole number of days from 1 to ${MAX_AUDIT_RETENTION_DAYS}, or "off", got ${String(days)}`);
  }
  if (config.maxOffset !== false && !(Number.isSafeInteger(config.maxOffset) && config.maxOffset >= 0 && config.maxOffset <= MAX_OFFSET)) {
    problems.push(`MAX_OFFSET must be a whole number of rows from 0 to ${MAX_OFFSET}, or "off", got ${String(config.maxOffset)}`);
  }
  const leaseSeconds = config.inFlightLeaseSeconds;
  if (!Number.isSafeInteger(leaseSeconds) || leaseSeconds < 1 || leaseSeconds > MAX_LEASE_SECONDS) {
    problems.push(`IN_FLIGHT_LEASE_SECONDS must be a whole number of seconds from 1 to ${MAX_LEASE_SECONDS}, got ${String(leaseSeconds)}`);
  } else if ((config.inFlightMax !== false || config.ownerInFlightMax !== false) && config.databaseUrl !== undefined && leaseSeconds * 1000 < timeout) {
    // A request waiting on one query for up to the timeout would outlive its lease and stop
    // counting against the cap: a lease must last at least as long as the slowest query may.
    problems.push(
      `IN_FLIGHT_LEASE_SECONDS (${leaseSeconds}) is shorter than DATABASE_QUERY_TIMEOUT_MS (${timeout} ms): a request still waiting on its query would stop counting against the in-flight cap; set it to at least ${Math.ceil(timeout / 1000)}, above your slowest request`,
    );
  }
  if (!Number.isSafeInteger(config.usageFlushMs) || config.usageFlushMs < 10 || config.usageFlushMs > MAX_USAGE_FLUSH_MS) {
    problems.push(`USAGE_FLUSH_MS must be a whole number of milliseconds from 10 to ${MAX_USAGE_FLUSH_MS}, got ${String(config.usageFlushMs)}`);
  }
  const formats = config.rateLimitHeaders;
  if (
    !Array.isArray(formats) ||
    formats.length === 0 ||
    !formats.every((f) => RATE_LIMIT_HEADER_FORMATS.includes(f)) ||
    (formats.includes('draft-11') && formats.includes('draft-7')) ||
    new Set(formats).size !== formats.length
  ) {
    problems.push(
      `RATE_LIMIT_HEADERS must be draft-11, draft-7 or legacy, or legacy with one draft ("draft-7,legacy"), got "${Array.isArray(formats) ? formats.join(',') : String(formats)}"`,
    );
  }
  if (config.publicUrl !== undefined) {
    const url = URL.canParse(config.publicUrl) ? new URL(config.publicUrl) : undefined;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
      problems.push(`PUBLIC_BASE_URL (or PUBLIC_URL) must be an http(s) origin with an optional path and no query, got "${config.publicUrl}"`);
    } else {
      config.publicUrl = url.href.replace(/\/$/, '');
    }
  }
  try {
    createClientAddressResolver(config.trustProxy);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(`TRUST_PROXY must be false, a number of proxies (1) or CIDR blocks (10.0.0.0/8,fd00::/8): ${error.message}`);
  }
  const keySchemes = config.keySchemes;
  if (
    !Array.isArray(keySchemes) ||
    keySchemes.length === 0 ||
    !keySchemes.every((scheme) => (KEY_SCHEMES as readonly string[]).includes(scheme)) ||
    new Set(keySchemes).size !== keySchemes.length
  ) {
    problems.push(
      `KEY_SCHEMES must list one or more of ${KEY_SCHEMES.join(', ')}, comma-separated, each once (spelt as shown), got "${Array.isArray(keySchemes) ? keySchemes.join(',') : String(keySchemes)}"`,
    );
  }
  if (!LOG_LEVELS.includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${String(config.logLevel)}"`);
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
  return config;
}

function isAdapter(value: unknown): value is AdapterName {
  return (ADAPTERS as readonly unknown[]).includes(value);
}

function adapterProblem(value: unknown): string {
  return `ADAPTER must be one of ${ADAPTERS.map((a) => `"${a}"`).join(', ')}, got "${String(value)}"`;
}

function stripUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
