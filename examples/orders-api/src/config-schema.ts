/**
 * The rules of the configuration, as zod schemas: `CONFIG_SCHEMA` checks typed values
 * (what `createOrdersApi` takes, and what the environment becomes), `ENV_SCHEMAS` turns each
 * environment variable's text into such a value. Every rule says what to change in one line
 * naming the variable (`RULES`), so a bad value is reported the same way however it came.
 * @module
 */
import { ConfigError, createClientAddressResolver, KEY_SCHEMES, type KeyScheme, type RateLimitHeaderFormat, type TrustProxy } from '@keyset/core';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

/** Adapters the example can serve through (`ADAPTER`), each with identical behaviour. */
export const ADAPTERS = Object.freeze(['hono', 'express', 'fastify', 'fetch'] as const);
export type AdapterName = (typeof ADAPTERS)[number];

export const LOG_LEVELS = Object.freeze(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const);
/** pino levels accepted by `LOG_LEVEL`. */
export type LogLevel = (typeof LOG_LEVELS)[number];

const RATE_LIMIT_HEADER_FORMATS = ['draft-11', 'draft-7', 'legacy'] as const satisfies readonly RateLimitHeaderFormat[];
const MAX_SEED = 1_000_000;
const MIN_SECRET_LENGTH = 32;
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
 * What each setting must be, by the variable that sets it: the problem line of a value that
 * breaks a rule is this, then what was given.
 */
export const RULES = Object.freeze({
  port: 'PORT must be an integer from 0 to 65535',
  host: 'HOST must be a host name or address',
  adapter: `ADAPTER must be one of ${ADAPTERS.map((a) => `"${a}"`).join(', ')}`,
  dataDir: 'DATA_DIR must be a directory path',
  databaseUrl: 'DATABASE_URL must start with postgres:// or postgresql://',
  redisUrl: 'REDIS_URL must start with redis:// or rediss://',
  seedOrders: `SEED_ORDERS must be a whole number from 0 to ${MAX_SEED}`,
  cursorSecrets: `CURSOR_SECRETS must hold one or more secrets of at least ${MIN_SECRET_LENGTH} random characters (openssl rand -base64 32), comma-separated`,
  cursorTtlSeconds: 'CURSOR_TTL_SECONDS must be a whole number of seconds from 1 to 999999999',
  keyPrefix: 'KEY_PREFIX must be lowercase letters and digits separated by single underscores (e.g. "acme_live"), at most 32 characters',
  keyPepper: `KEY_PEPPER (or each of KEY_PEPPERS) must be at least ${MIN_SECRET_LENGTH} characters, each pepper once`,
  rateLimit: 'RATE_LIMIT must look like "100/1s", "600/1m" or "10000/1h"',
  refusedKeyLimit: 'REFUSED_KEY_LIMIT must look like "60/1m" or "10/1s", or be "off"',
  inFlightMax: `IN_FLIGHT_MAX must be a whole number of requests from 1 to ${MAX_IN_FLIGHT}, or "off"`,
  ownerInFlightMax: `OWNER_IN_FLIGHT_MAX must be a whole number of requests from 1 to ${MAX_IN_FLIGHT}, or "off"`,
  inFlightLeaseSeconds: `IN_FLIGHT_LEASE_SECONDS must be a whole number of seconds from 1 to ${MAX_LEASE_SECONDS}`,
  usageFlushMs: `USAGE_FLUSH_MS must be a whole number of milliseconds from 10 to ${MAX_USAGE_FLUSH_MS}`,
  maxOffset: `MAX_OFFSET must be a whole number of rows from 0 to ${MAX_OFFSET}, or "off"`,
  auditRetentionDays: `AUDIT_RETENTION_DAYS must be a whole number of days from 1 to ${MAX_AUDIT_RETENTION_DAYS}, or "off"`,
  rateLimitHeaders: 'RATE_LIMIT_HEADERS must be draft-11, draft-7 or legacy, or legacy with one draft ("draft-7,legacy")',
  publicUrl: 'PUBLIC_BASE_URL (or PUBLIC_URL) must be an http(s) origin with an optional path and no query',
  databaseQueryTimeoutMs: 'DATABASE_QUERY_TIMEOUT_MS must be a whole number of milliseconds from 100 to 3600000, or 0 for none',
  trustProxy: 'TRUST_PROXY must be false, a number of proxies (1) or CIDR blocks (10.0.0.0/8,fd00::/8)',
  keySchemes: `KEY_SCHEMES must list one or more of ${KEY_SCHEMES.join(', ')}, comma-separated, each once (spelt as shown)`,
  leakAlertPath: 'LEAK_ALERT_PATH must be a path such as /secret-scanning/github (letters, digits, / . _ ~ -)',
  leakAlertKeysUrl: 'LEAK_ALERT_KEYS_URL must be an http(s) URL',
  leakAlertPolicy: 'LEAK_ALERT_POLICY must be revoke or mark',
  logLevel: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`,
  metricsPort: 'METRICS_PORT must be an integer from 0 to 65535',
  otlpEndpoint: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL such as http://localhost:4318',
});

/** A problem a check words itself (not in `RULES`' words): `said` tells it from a failed rule. */
function say(ctx: { addIssue(issue: { code: 'custom'; message: string; params: { said: true } }): void }, message: string): void {
  ctx.addIssue({ code: 'custom', message, params: { said: true } });
}

/** Whether a problem was worded by its check (`say`), not by a setting's rule. */
export function isSaid(issue: { code: string; params?: unknown }): boolean {
  return issue.code === 'custom' && (issue.params as { said?: unknown } | undefined)?.said === true;
}

const int = (min: number, max: number) => z.int().min(min).max(max);
const httpUrl = z.string().regex(/^https?:\/\/./);
const rate = z.object({ limit: z.int().min(1), windowSeconds: z.number().positive().finite() });
const unique = (list: readonly unknown[]) => new Set(list).size === list.length;

/**
 * The typed configuration's rules. `dataDir` resolves against the cwd, `publicUrl` loses
 * its trailing slash; the rest is checked as given.
 */
export const CONFIG_SCHEMA = z
  .object({
    port: int(0, 65_535),
    host: z.string().min(1),
    adapter: z.enum(ADAPTERS),
    dataDir: z.string().min(1).transform((dir) => (isAbsolute(dir) ? dir : resolve(dir))),
    databaseUrl: z.string().regex(/^postgres(ql)?:\/\/./).optional(),
    redisUrl: z.string().regex(/^rediss?:\/\/./).optional(),
    seedOrders: int(0, MAX_SEED),
    cursorSecrets: z
      .array(z.string())
      .superRefine((secrets, ctx) => {
        if (secrets.length === 0) say(ctx, 'CURSOR_SECRETS is set but holds no secret');
        secrets.forEach((secret, i) => {
          if (secret.length >= MIN_SECRET_LENGTH) return;
          say(ctx, `CURSOR_SECRETS entry ${i + 1} is ${secret.length} characters; use at least ${MIN_SECRET_LENGTH} random characters (openssl rand -base64 32)`);
        });
      })
      .optional(),
    cursorTtlSeconds: int(1, 999_999_999),
    keyPrefix: z.string().max(32).regex(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/),
    keyPepper: z
      .union([
        z.string().min(MIN_SECRET_LENGTH),
        z.array(z.string()).superRefine((peppers, ctx) => {
          peppers.forEach((pepper, n) => {
            const first = peppers.indexOf(pepper);
            if (pepper.length < MIN_SECRET_LENGTH) say(ctx, `KEY_PEPPERS entry ${n + 1} must be at least ${MIN_SECRET_LENGTH} characters`);
            else if (first !== n) say(ctx, `KEY_PEPPERS entry ${n + 1} repeats entry ${first + 1}`);
          });
        }),
      ])
      .optional(),
    rateLimit: rate,
    refusedKeyLimit: z.union([z.literal(false), rate]),
    inFlightMax: z.union([z.literal(false), int(1, MAX_IN_FLIGHT)]),
    ownerInFlightMax: z.union([z.literal(false), int(1, MAX_IN_FLIGHT)]),
    inFlightLeaseSeconds: int(1, MAX_LEASE_SECONDS),
    usageFlushMs: int(10, MAX_USAGE_FLUSH_MS),
    maxOffset: z.union([z.literal(false), int(0, MAX_OFFSET)]),
    auditRetentionDays: z.union([z.literal(false), int(1, MAX_AUDIT_RETENTION_DAYS)]),
    rateLimitHeaders: z
      .array(z.enum(RATE_LIMIT_HEADER_FORMATS))
      .min(1)
      .refine(unique)
      // The two drafts share header names: one of them at most.
      .refine((formats) => !(formats.includes('draft-11') && formats.includes('draft-7'))),
    publicUrl: z
      .string()
      .refine((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol) && new URL(text).search === '' && new URL(text).hash === '')
      .transform((text) => new URL(text).href.replace(/\/$/, ''))
      .optional(),
    databaseQueryTimeoutMs: z.union([z.literal(0), int(100, 3_600_000)]),
    trustProxy: z.custom<TrustProxy>().superRefine((value, ctx) => {
      const refused = trustProxyProblem(value);
      if (refused !== undefined) say(ctx, `${RULES.trustProxy}: ${refused}`);
    }),
    keySchemes: z
      .array(z.enum(KEY_SCHEMES as readonly KeyScheme[] as [KeyScheme, ...KeyScheme[]]))
      .min(1)
      .refine(unique),
    leakAlertPath: z.string().regex(/^\/[A-Za-z0-9._~/-]*$/).optional(),
    leakAlertKeysUrl: httpUrl,
    leakAlertPolicy: z.enum(['revoke', 'mark']),
    logLevel: z.enum(LOG_LEVELS),
    metricsPort: int(0, 65_535).optional(),
    otlpEndpoint: httpUrl.optional(),
  });

/**
 * Problems no single setting's rule can say, between settings that each passed their own:
 * each names what to change.
 */
export function crossProblems(config: z.input<typeof CONFIG_SCHEMA>, valid: (field: keyof typeof RULES) => boolean): string[] {
  const problems: string[] = [];
  const { port, metricsPort, inFlightLeaseSeconds: lease, databaseQueryTimeoutMs: timeout } = config;
  if (valid('metricsPort') && valid('port') && metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    problems.push(`METRICS_PORT must differ from PORT (${port}): metrics have a listener of their own`);
  }
  // A request waiting on one query for up to the timeout would outlive its lease and stop
  // counting against the cap: a lease must last at least as long as the slowest query may.
  const capped = config.inFlightMax !== false || config.ownerInFlightMax !== false;
  if (valid('inFlightLeaseSeconds') && valid('databaseQueryTimeoutMs') && capped && config.databaseUrl !== undefined && lease * 1000 < timeout) {
    problems.push(
      `IN_FLIGHT_LEASE_SECONDS (${lease}) is shorter than DATABASE_QUERY_TIMEOUT_MS (${timeout} ms): a request still waiting on its query would stop counting against the in-flight cap; set it to at least ${Math.ceil(timeout / 1000)}, above your slowest request`,
    );
  }
  return problems;
}

/** What core's client-address resolver finds wrong with `value`, or `undefined`. */
function trustProxyProblem(value: TrustProxy): string | undefined {
  try {
    createClientAddressResolver(value);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

/**
 * Parses a rate such as `100/1s`, `600/m`, `10/30s` into a policy, or `undefined`.
 *
 * @example
 * ```ts
 * parseRate('100/1s'); // { limit: 100, windowSeconds: 1 }
 * ```
 */
export function parseRate(text: string): { limit: number; windowSeconds: number } | undefined {
  const match = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,6})?(s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const [, limit, count = '1', unit = 's'] = match;
  return { limit: Number(limit), windowSeconds: Number(count) * (UNITS[unit] ?? 1) };
}

/** Text of whole digits, no sign or leading zero, as a number. */
const digits = (pattern: RegExp) => z.string().regex(pattern).transform(Number);
/** `off` → false, else `schema`. */
const orOff = <T>(schema: z.ZodType<T, string>) => z.union([z.literal('off').transform(() => false as const), schema]);
const list = z.string().transform((text) => text.split(',').map((part) => part.trim()));
const rateText = z.string().transform((text, ctx) => parseRate(text) ?? (ctx.addIssue({ code: 'custom', message: 'not a rate' }), z.NEVER));

/**
 * Each variable's text → the setting's value (range checks are `CONFIG_SCHEMA`'s), by the
 * setting it sets. Aliases and pairs (`CURSOR_SECRET`, `KEY_PEPPER`/`KEY_PEPPERS`,
 * `PUBLIC_URL`, `DATA_DIR` against `INIT_CWD`) are read by `loadConfig` first.
 */
export const ENV_SCHEMAS = Object.freeze({
  PORT: ['port', digits(/^(0|[1-9][0-9]{0,4})$/)],
  HOST: ['host', z.string()],
  ADAPTER: ['adapter', z.string()],
  DATABASE_URL: ['databaseUrl', z.string()],
  REDIS_URL: ['redisUrl', z.string()],
  SEED_ORDERS: ['seedOrders', digits(/^(0|[1-9][0-9]*)$/)],
  CURSOR_TTL_SECONDS: ['cursorTtlSeconds', digits(/^[1-9][0-9]{0,8}$/)],
  KEY_PREFIX: ['keyPrefix', z.string()],
  RATE_LIMIT: ['rateLimit', rateText],
  REFUSED_KEY_LIMIT: ['refusedKeyLimit', orOff(rateText)],
  IN_FLIGHT_MAX: ['inFlightMax', orOff(digits(/^[1-9][0-9]{0,6}$/))],
  OWNER_IN_FLIGHT_MAX: ['ownerInFlightMax', orOff(digits(/^[1-9][0-9]{0,6}$/))],
  IN_FLIGHT_LEASE_SECONDS: ['inFlightLeaseSeconds', digits(/^[1-9][0-9]{0,4}$/)],
  METRICS_PORT: ['metricsPort', digits(/^(0|[1-9][0-9]{0,4})$/)],
  OTEL_EXPORTER_OTLP_ENDPOINT: ['otlpEndpoint', z.string()],
  USAGE_FLUSH_MS: ['usageFlushMs', digits(/^[1-9][0-9]{1,6}$/)],
  MAX_OFFSET: ['maxOffset', orOff(digits(/^(0|[1-9][0-9]{0,14})$/))],
  AUDIT_RETENTION_DAYS: ['auditRetentionDays', orOff(digits(/^[1-9][0-9]{0,4}$/))],
  RATE_LIMIT_HEADERS: ['rateLimitHeaders', list],
  DATABASE_QUERY_TIMEOUT_MS: ['databaseQueryTimeoutMs', digits(/^(0|[1-9][0-9]{0,8})$/)],
  // `false` or `0`: no proxy; a number: that many hops; else CIDR blocks.
  TRUST_PROXY: [
    'trustProxy',
    z.string().transform((text): TrustProxy => (text === 'false' || text === '0' ? false : /^[0-9]+$/.test(text) ? { hops: Number(text) } : { cidrs: text.split(',').map((block) => block.trim()).filter((block) => block !== '') })),
  ],
  KEY_SCHEMES: ['keySchemes', list],
  LEAK_ALERT_PATH: ['leakAlertPath', z.string()],
  LEAK_ALERT_KEYS_URL: ['leakAlertKeysUrl', z.string()],
  LEAK_ALERT_POLICY: ['leakAlertPolicy', z.string()],
  LOG_LEVEL: ['logLevel', z.string()],
} as const satisfies Record<string, readonly [keyof typeof RULES, z.ZodType<unknown, string>]>);
