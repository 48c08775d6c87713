/**
 * Validation of what administrators send (issue, rotate, list). The example's admin
 * routes pass request bodies straight in, so every rule lives here, not in an adapter,
 * and every failure is a 400 `invalid_request` naming the field.
 * @module
 */
import { MAX_INSTANT_MS } from '../instant.ts';
import { KeysetError } from '../errors.ts';
import { parseTimestamp } from '../internal/timestamp.ts';
import { quotaProblem } from '../quota/quota-period.ts';
import type { Quota, QuotaRefill } from '../quota/types.ts';
import { rateLimitPolicyProblem } from '../rate-limit/gcra.ts';
import type { IdentityLimitsPatch, ListIdentitiesQuery, StoredIdentity } from '../keys/key-store.ts';
import { validateIpAllowlist } from '../auth/ip-allowlist.ts';
import { validateMetadata, type KeyMetadata } from '../keys/key-metadata.ts';
import type { KeyRateLimit } from '../keys/key-record.ts';
import { applyQuotaPatch, withMode, type QuotaPatch } from '../keys/quota-patch.ts';
import type { LimitMode } from '../rate-limit/limit-mode.ts';
import { containsKeyShapedText } from '../redaction/redact-text.ts';
import { isValidScope } from '../keys/scopes.ts';

/** What `Keyring.issue` takes. */
export interface IssueKeyInput {
  /** Who or what the key is for. 1–200 characters, no control characters. */
  name: string;
  /** Granted scopes (RFC 6749 scope tokens, at most 100). Duplicates are dropped. */
  scopes: readonly string[];
  /** Per-identity rate limit; `null`/absent = the limiter's default. Same as `rateLimits: [rateLimit]`. */
  rateLimit?: KeyRateLimit | null;
  /**
   * Several named rate limits decided together (e.g. `{ name: 'second', limit: 10,
   * windowSeconds: 1 }` and `{ name: 'day', limit: 10000, windowSeconds: 86400 }`), at most
   * 10 with distinct names. Not together with `rateLimit`.
   */
  rateLimits?: readonly KeyRateLimit[] | null;
  /** A usage quota: `remaining` credits, optionally refilled. `null`/absent = none. */
  quota?: QuotaInput | null;
  /** When the identity stops verifying: a `Date` or an ISO 8601 string, in the future. */
  expiresAt?: Date | string | null;
  /**
   * Environment of the key (a name from `KeyringOptions.prefix`), which picks its prefix.
   * @default the first environment
   */
  environment?: string | null;
  /**
   * Operator data returned by `verify` and the admin API: a JSON object of at most 4 KiB
   * as UTF-8 JSON, 5 levels deep, 100 members per object (see `MAX_METADATA_BYTES`).
   * @default {}
   */
  metadata?: KeyMetadata | null;
  /**
   * IPv4/IPv6 addresses or CIDR blocks (at most 100) the key may be used from; any other
   * client address gets 403 `ip_not_allowed`. `null`/absent: any address.
   */
  ipAllowlist?: readonly string[] | null;
  /**
   * The owner the key belongs to (made with `createOwnerAdmin(keyring).create`): its rate
   * limits apply beside the key's, and disabling or deleting it refuses the key.
   * `null`/absent: none.
   */
  ownerId?: string | null;
}

/**
 * An owner id: 1-128 of `A-Z a-z 0-9 _ . : -` (no braces, so it can name a Redis Cluster
 * hash tag, and nothing a URL path encodes), but not `.` or `..`: those are dot segments
 * (RFC 3986 §5.2.4), which every URL parser drops, so `/api/owners/..` would never reach
 * the owner. Every id of this grammar reaches `/owners/{id}` unchanged.
 */
export const OWNER_ID_PATTERN: RegExp = /^(?!\.\.?$)[A-Za-z0-9_.:-]{1,128}$/;

/** `ownerId` validated, or an `invalid_request` naming `field`. */
export function validateOwnerId(value: unknown, field = 'ownerId'): string {
  if (typeof value !== 'string' || !OWNER_ID_PATTERN.test(value)) {
    throw invalid(field, `\`${field}\` must be 1-128 characters of A-Z a-z 0-9 _ . : -, and not \`.\` or \`..\` (a URL path drops them)`);
  }
  if (containsKeyShapedText(value)) throw keyTextRefusal(field);
  return value;
}

/** What `Keyring.update` changes; an absent field is left as it is. */
export interface UpdateKeyInput {
  /** Replaces the metadata (`null` = `{}`). Same bounds as at issue. */
  metadata?: KeyMetadata | null;
  /** Replaces the allowlist (`null` = any address). */
  ipAllowlist?: readonly string[] | null;
}

/** A quota as administrators set it. */
export interface QuotaInput {
  /** Credits from now on: an integer from 0 to 10^15. */
  remaining: number;
  /** `{ amount, interval: 'daily' | 'monthly' | seconds }`, or `null` for a one-off budget. */
  refill?: QuotaRefill | null;
  /** `'observe'`: a shadow quota, counted but never refusing (see `Quota.mode`). Left out keeps the current mode (enforced for a new quota). */
  mode?: LimitMode;
}

/** What `Keyring.updateLimits` takes; a field left out is kept, `null` removes it. */
export interface UpdateLimitsInput {
  rateLimit?: KeyRateLimit | null;
  rateLimits?: readonly KeyRateLimit[] | null;
  /**
   * The new quota. `refill` left out keeps the current refill. Setting it (even to the
   * same numbers) restarts the count at `remaining` from now.
   */
  quota?: QuotaInput | null;
  /**
   * Switches the current quota between `'enforce'` and `'observe'` (shadow mode) and
   * nothing else: its count goes on. Not together with `quota`; 400 without a quota.
   */
  quotaMode?: LimitMode;
}

/** Options of `Keyring.rotate`. */
export interface RotateKeyOptions {
  /** Seconds the old secret keeps working (0 = replace at once, e.g. after a leak). At most 30 days. */
  overlapSeconds: number;
}

/**
 * A page request for `Keyring.list`, shaped so a `PagePlan` from `createPaginator` (sort
 * `keyListSort`) fits as is. `take` defaults to `limit + 1`. In cursor mode `after` is the
 * last record of the previous page: `{ createdAt, id }` or `[createdAt, id]` (a `Date`,
 * ISO string or epoch ms for `createdAt`), or `null` for the first page.
 */
export interface KeyListPlan {
  mode: 'cursor' | 'offset';
  limit: number;
  take?: number;
  after?: unknown;
  /**
   * Cursor mode: `'backward'` for a page reached through a `prevCursor` (the records then
   * come oldest first, as `Paginator.page` expects them).
   * @default 'forward'
   */
  direction?: 'forward' | 'backward';
  offset?: number;
}

const MAX_NAME = 200;
const MAX_SCOPES = 100;
const MAX_OVERLAP_SECONDS = 30 * 24 * 3600;
const MAX_PAGE = 1000;
const CONTROL = /[\u0000-\u001f\u007f]/;
/** An unpaired UTF-16 surrogate: no UTF-8 store can hold it (node-postgres and PGlite would write U+FFFD instead). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The latest `expiresAt`: the end of year 9999 UTC. Every store can hold it (PostgreSQL
 * takes ISO 8601 text with a four-digit year; `Date#toISOString` writes `+010000-…` past
 * it), and an RFC 3339 timestamp can name it. Later than this is no expiry worth storing.
 */
export const MAX_KEY_TIMESTAMP_MS: number = MAX_INSTANT_MS;

/**
 * The largest `limit` of a key's rate limit: 2^31 − 1 requests per window, what every
 * store holds (PostgreSQL keeps the first limit in an `integer` column as well).
 */
export const MAX_KEY_RATE_LIMIT = 2_147_483_647;

function invalid(field: string, detail: string): KeysetError {
  return new KeysetError('invalid_request', { detail, extensions: { field } });
}

/**
 * The refusal of key-shaped text in a stored field: a name, scope,
 * metadata string or rate-limit policy name is shown in lists, logs and the
 * `RateLimit-Policy` header of every request, so a key pasted into one would be sent
 * everywhere. "Key-shaped" is whatever redaction would hide, mangled keys included
 * (`containsKeyShapedText`); key-metadata.ts words its own alike.
 */
function keyTextRefusal(field: string): KeysetError {
  return invalid(field, `\`${field}\` must not hold an API key or anything shaped like one (a long run of letters and digits).`);
}

/** Identity fields from `input`, validated; `now` is epoch ms. Throws `invalid_request`. */
export function validateIssueInput(
  input: IssueKeyInput,
  now: number,
): Pick<StoredIdentity, 'name' | 'scopes' | 'rateLimit' | 'rateLimits' | 'quota' | 'expiresAt' | 'metadata' | 'ipAllowlist'> & { environment: string | null; ownerId: string | null } {
  if (typeof input !== 'object' || input === null) throw invalid('body', 'Send an object with `name` and `scopes`.');
  const { name, scopes, expiresAt = null, environment = null } = input;
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > MAX_NAME || CONTROL.test(name) || LONE_SURROGATE.test(name)) {
    throw invalid('name', `\`name\` must be 1–${MAX_NAME} characters of Unicode text without control characters.`);
  }
  if (containsKeyShapedText(name)) throw keyTextRefusal('name');
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every(isValidScope)) {
    throw invalid('scopes', `\`scopes\` must be an array of at most ${MAX_SCOPES} scope tokens (printable ASCII without spaces, quotes or backslashes).`);
  }
  const keyShaped = scopes.findIndex((scope: string) => containsKeyShapedText(scope));
  if (keyShaped >= 0) throw keyTextRefusal(`scopes[${keyShaped}]`);
  const limits = validateRateLimits(input);
  const quota = input.quota === undefined || input.quota === null ? null : validateQuota(input.quota, null, now);
  let expires: Date | null = null;
  if (expiresAt !== null) {
    const ms = expiresAt instanceof Date ? expiresAt.getTime() : typeof expiresAt === 'string' ? Date.parse(expiresAt) : NaN;
    if (!Number.isFinite(ms)) throw invalid('expiresAt', '`expiresAt` must be an ISO 8601 timestamp.');
    if (ms <= now) throw invalid('expiresAt', '`expiresAt` must be in the future.');
    if (ms > MAX_KEY_TIMESTAMP_MS) throw invalid('expiresAt', '`expiresAt` must be at most 9999-12-31T23:59:59.999Z (the end of year 9999 UTC).');
    expires = new Date(ms);
  }
  if (environment !== null && typeof environment !== 'string') throw invalid('environment', '`environment` must be the name of a configured environment.');
  const metadata = validateMetadata(input.metadata);
  const ipAllowlist = validateIpAllowlist(input.ipAllowlist);
  const ownerId = input.ownerId === undefined || input.ownerId === null ? null : validateOwnerId(input.ownerId);
  return { name, scopes: [...new Set(scopes)], ...limits, quota, expiresAt: expires, environment, metadata, ipAllowlist, ownerId };
}

/** The fields `update` changes, validated; absent ones are absent. Throws `invalid_request`. */
export function validateUpdateInput(input: UpdateKeyInput): Partial<Pick<StoredIdentity, 'metadata' | 'ipAllowlist'>> {
  if (typeof input !== 'object' || input === null) throw invalid('body', 'Send an object with `metadata` and/or `ipAllowlist`.');
  const out: Partial<Pick<StoredIdentity, 'metadata' | 'ipAllowlist'>> = {};
  if (input.metadata !== undefined) out.metadata = validateMetadata(input.metadata);
  if (input.ipAllowlist !== undefined) out.ipAllowlist = validateIpAllowlist(input.ipAllowlist);
  if (Object.keys(out).length === 0) throw invalid('body', 'Send `metadata` and/or `ipAllowlist` to change.');
  return out;
}

const MAX_RATE_LIMITS = 10;

/** A rate-limit policy name (gcra.ts's rule): 1–64 of `A-Z a-z 0-9 _ . -`. */
const POLICY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

function validateRateLimit(value: unknown, field: string): KeyRateLimit {
  const { limit, windowSeconds, name, burst, mode } = (typeof value === 'object' && value !== null ? value : {}) as Partial<KeyRateLimit>;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'observe') throw invalid(`${field}.mode`, `\`${field}.mode\` must be 'enforce' or 'observe'.`);
  // The name first, in our words: the limiter's message quotes it, and it is client text.
  if (name !== undefined) {
    if (typeof name !== 'string' || !POLICY_NAME.test(name)) throw invalid(`${field}.name`, `\`${field}.name\` must be 1–64 characters of A-Z a-z 0-9 _ . -`);
    // Sent in the RateLimit-Policy header of every request made with the key.
    if (containsKeyShapedText(name)) throw keyTextRefusal(`${field}.name`);
    // `owner.` names the owner's limits in the same headers.
    if (name.startsWith('owner.')) throw invalid(`${field}.name`, `\`${field}.name\` must not start with \`owner.\`: the headers name the owner's limits so.`);
  }
  // One rule for key limits and limiter policies: a limit the limiter would refuse
  // must be refused here, not silently replaced by the default policy later.
  const problem = rateLimitPolicyProblem({ limit, windowSeconds, ...(name === undefined ? {} : { name }), ...(burst === undefined ? {} : { burst }) });
  if (problem !== undefined) {
    throw invalid(field, `\`${field}\` must be \`{ limit, windowSeconds, name?, burst? }\` with a positive integer limit and a whole number of seconds: ${problem}.`);
  }
  if ((limit as number) > MAX_KEY_RATE_LIMIT) {
    throw invalid(`${field}.limit`, `\`${field}.limit\` must be at most ${MAX_KEY_RATE_LIMIT} requests per window.`);
  }
  // Enforced is the default: only `observe` is stored.
  return { limit: limit as number, windowSeconds: windowSeconds as number, ...(name === undefined ? {} : { name }), ...(burst === undefined ? {} : { burst }), ...(mode === 'observe' ? { mode } : {}) };
}

/**
 * `rateLimit` or `rateLimits` from an input, validated; both absent → `null` for both.
 * Throws `invalid_request` naming the field.
 */
export function validateRateLimits(input: { rateLimit?: unknown; rateLimits?: unknown }): Pick<StoredIdentity, 'rateLimit' | 'rateLimits'> {
  const { rateLimit = null, rateLimits = null } = input;
  if (rateLimit !== null && rateLimits !== null) throw invalid('rateLimits', 'Send `rateLimit` or `rateLimits`, not both.');
  if (rateLimits === null) {
    if (rateLimit === null) return { rateLimit: null, rateLimits: null };
    const one = validateRateLimit(rateLimit, 'rateLimit');
    return { rateLimit: { limit: one.limit, windowSeconds: one.windowSeconds }, rateLimits: [one] };
  }
  if (!Array.isArray(rateLimits) || rateLimits.length === 0 || rateLimits.length > MAX_RATE_LIMITS) {
    throw invalid('rateLimits', `\`rateLimits\` must be an array of 1 to ${MAX_RATE_LIMITS} limits (or null for the default).`);
  }
  const names = new Set<string>();
  const list = rateLimits.map((value: unknown, i: number) => {
    const one = validateRateLimit(value, `rateLimits[${i}]`);
    const name = one.name ?? 'default';
    if (names.has(name)) throw invalid(`rateLimits[${i}].name`, `\`rateLimits[${i}].name\` is the name of an earlier rate limit; give each its own \`name\`.`);
    names.add(name);
    return one;
  });
  const first = list[0] as KeyRateLimit;
  return { rateLimit: { limit: first.limit, windowSeconds: first.windowSeconds }, rateLimits: list };
}

/**
 * A quota from an input, validated, to set at `now` (epoch ms); `refill` left out stays
 * left out, for the store to keep the current one (`applyQuotaPatch`). Throws
 * `invalid_request` naming the field.
 */
export function validateQuotaPatch(value: QuotaInput, now: number): QuotaPatch {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('quota', '`quota` must be `{ remaining, refill? }` or null.');
  }
  const problem = quotaProblem({ remaining: value.remaining, refill: value.refill });
  if (problem !== undefined) {
    const field = problem.startsWith('refill') ? `quota.${problem.split(' ')[0] as string}` : 'quota.remaining';
    throw invalid(field, `\`quota\` must be \`{ remaining, refill?: { amount, interval: 'daily' | 'monthly' | seconds } | null }\`: ${problem}.`);
  }
  const { mode } = value;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'observe') throw invalid('quota.mode', "`quota.mode` must be 'enforce' or 'observe'.");
  const patch: QuotaPatch = { remaining: value.remaining, setAt: new Date(now) };
  if (mode !== undefined) patch.mode = mode;
  if (value.refill !== undefined) patch.refill = value.refill === null ? null : { amount: value.refill.amount, interval: value.refill.interval };
  return patch;
}

/**
 * A quota from an input, validated, set at `now` (epoch ms). `refill` left out keeps
 * `current`'s refill. Throws `invalid_request` naming the field.
 */
export function validateQuota(value: QuotaInput, current: Quota | null, now: number): Quota {
  return applyQuotaPatch(current, validateQuotaPatch(value, now));
}

/** The store patch for `Keyring.updateLimits`. Throws `invalid_request`. */
export function validateLimitsPatch(input: UpdateLimitsInput, current: Quota | null, now: number): IdentityLimitsPatch {
  if (typeof input !== 'object' || input === null) throw invalid('body', 'Send an object with `rateLimits`, `quota` and/or `quotaMode`.');
  const patch: IdentityLimitsPatch = {};
  if (input.rateLimit !== undefined || input.rateLimits !== undefined) patch.rateLimits = validateRateLimits(input).rateLimits ?? null;
  if (input.quota !== undefined) patch.quota = input.quota === null ? null : validateQuota(input.quota, current, now);
  const mode = validateQuotaMode(input.quotaMode, input.quota, current);
  if (mode !== undefined) patch.quota = withMode(current as Quota, mode);
  return patch;
}

/**
 * A `quotaMode` switch, validated against the current quota (`current` left out: not
 * checked yet); `undefined` when none is asked. Throws `invalid_request` for another
 * value, with `quota` beside it, or without a quota to switch.
 */
export function validateQuotaMode(mode: unknown, quota: unknown, current: Quota | null | undefined): LimitMode | undefined {
  if (mode === undefined) return undefined;
  if (mode !== 'enforce' && mode !== 'observe') throw invalid('quotaMode', "`quotaMode` must be 'enforce' or 'observe'.");
  if (quota !== undefined) throw invalid('quotaMode', 'Send `quota` (which may carry `mode`) or `quotaMode`, not both.');
  if (current === null) throw invalid('quotaMode', 'There is no quota to switch; set one with `quota`.');
  return mode;
}

/** The overlap in milliseconds. Throws `invalid_request`. */
export function validateOverlap(options: RotateKeyOptions): number {
  const overlap = (options as Partial<RotateKeyOptions> | undefined)?.overlapSeconds;
  if (!Number.isSafeInteger(overlap) || (overlap as number) < 0 || (overlap as number) > MAX_OVERLAP_SECONDS) {
    throw invalid('overlapSeconds', `\`overlapSeconds\` must be an integer from 0 to ${MAX_OVERLAP_SECONDS} (30 days).`);
  }
  return (overlap as number) * 1000;
}

/** A cursor's `createdAt`: a `Date`, epoch ms, or timestamp text as the paginator carries it. */
function toTime(value: unknown): Date | undefined {
  let ms = NaN;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    const instant = parseTimestamp(value);
    // Key timestamps are whole milliseconds (they come from the keyring's clock).
    if (instant !== undefined) ms = instant.seconds * 1000 + Math.floor(instant.micros / 1000);
  }
  // Outside what a store holds, no key was created there: not a key position.
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_KEY_TIMESTAMP_MS ? new Date(ms) : undefined;
}

function position(after: unknown): { createdAt: Date; id: string } | undefined {
  let createdAt: unknown;
  let id: unknown;
  if (Array.isArray(after)) [createdAt, id] = after as unknown[];
  else if (typeof after === 'object' && after !== null) {
    const o = after as { createdAt?: unknown; id?: unknown; values?: unknown };
    if (Array.isArray(o.values)) [createdAt, id] = o.values as unknown[];
    else ({ createdAt, id } = o);
  }
  const time = toTime(createdAt);
  return time !== undefined && typeof id === 'string' ? { createdAt: time, id } : undefined;
}

/** The store query for `plan`. A position that is not a key position → 400 `invalid_cursor`. */
export function toListQuery(plan: KeyListPlan): { query: ListIdentitiesQuery; limit: number } {
  const { mode, limit, take = limit + 1 } = plan;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE || !Number.isSafeInteger(take) || take < 1 || take > MAX_PAGE + 1) {
    throw invalid('limit', `\`limit\` must be an integer from 1 to ${MAX_PAGE}.`);
  }
  if (mode === 'offset') {
    const { offset = 0 } = plan;
    if (!Number.isSafeInteger(offset) || offset < 0) throw invalid('offset', '`offset` must be a non-negative integer.');
    return { query: { take, offset, withTotal: true }, limit };
  }
  if (mode !== 'cursor') throw invalid('mode', "`mode` must be 'cursor' or 'offset'.");
  const { direction = 'forward' } = plan;
  if (direction !== 'forward' && direction !== 'backward') throw invalid('direction', "`direction` must be 'forward' or 'backward'.");
  const way = direction === 'backward' ? { direction } : {};
  if (plan.after === null || plan.after === undefined) return { query: { take, ...way }, limit };
  const after = position(plan.after);
  if (after === undefined) throw new KeysetError('invalid_cursor', { detail: 'The cursor does not point into the key list.' });
  return { query: { take, after, ...way }, limit };
}
