/**
 * `/api/keys`: issue, list, inspect, rotate and revoke keys (scope `keys:admin`). Bodies
 * are validated field by field; records never carry a digest or key text beyond `last4`,
 * and the key string itself is in the response to issue and rotate only.
 * @module
 */
import {
  createKeyAdmin,
  type AuditContext,
  type IssueKeyInput,
  type KeyMetadata,
  type Keyring,
  type KeyRecord,
  type PagePlan,
  type QuotaInput,
  type RateLimiterWithState,
  type RotateKeyOptions,
  type UpdateKeyInput,
  type UpdateLimitsInput,
} from '@keyset/core';
import { parseInstant, type KnownOptions } from '@keyset/core/adapter';
import type { AppResponse } from './app-types.ts';
import { invalid, isIntegerIn, rejectUnknownMembers, type BodyShape } from './validation.ts';

/** Every scope the example knows. Anything else is refused at issue time. */
export const SCOPES = Object.freeze(['orders:read', 'reports:read', 'keys:admin'] as const);
export type Scope = (typeof SCOPES)[number];

/** Bounds of a per-key rate limit. */
const MAX_RATE_LIMIT = 1_000_000;
const MAX_WINDOW_SECONDS = 86_400;
/** Longest rotation overlap: 30 days. */
export const MAX_OVERLAP_SECONDS = 30 * 86_400;
const MAX_NAME_LENGTH = 100;
/** Issue and rotate answer with the key itself: no cache (browser, proxy) may keep a copy. */
const HOLDS_A_KEY = Object.freeze({ 'cache-control': 'no-store' });

/**
 * The members each admin body may hold, at every depth: anything else is a 400 naming its
 * path (`quota.refil`, `quota.refill.amout`, `rateLimits[0].windowSecond`). Each list is
 * exactly the keyring input's keys (`satisfies KnownOptions<…>`), so they cannot drift.
 */
export const RATE_LIMIT = { name: true, limit: true, windowSeconds: true, burst: true, mode: true } as const satisfies KnownOptions<NonNullable<UpdateLimitsInput['rateLimit']>>;
export const QUOTA = { remaining: true, refill: { amount: true, interval: true }, mode: true } as const satisfies KnownOptions<QuotaInput>;
const ISSUE_BODY = {
  name: true,
  scopes: true,
  rateLimit: RATE_LIMIT,
  rateLimits: RATE_LIMIT,
  quota: QUOTA,
  expiresAt: true,
  environment: true,
  metadata: true,
  ipAllowlist: true,
  ownerId: true,
} as const satisfies KnownOptions<IssueKeyInput> & BodyShape;
const UPDATE_BODY = { metadata: true, ipAllowlist: true } as const satisfies KnownOptions<UpdateKeyInput> & BodyShape;
const LIMITS_BODY = { rateLimit: RATE_LIMIT, rateLimits: RATE_LIMIT, quota: QUOTA, quotaMode: true } as const satisfies KnownOptions<UpdateLimitsInput> & BodyShape;
const ROTATE_BODY = { overlapSeconds: true } as const satisfies KnownOptions<RotateKeyOptions> & BodyShape;

/** A validated issue request. */
export interface IssueInput {
  name: string;
  scopes: Scope[];
  rateLimit?: { limit: number; windowSeconds: number };
  /** Several named limits; validated by the keyring (400 naming the field). */
  rateLimits?: NonNullable<UpdateLimitsInput['rateLimits']>;
  /** `{ remaining, refill? }`; validated by the keyring. */
  quota?: QuotaInput;
  expiresAt?: Date;
  /** Checked by the keyring (400 naming the field): a configured environment, a JSON object, CIDR blocks. */
  environment?: string | null;
  metadata?: KeyMetadata | null;
  ipAllowlist?: string[] | null;
  /** The owner the key belongs to (`/api/owners`); checked by the keyring. */
  ownerId?: string | null;
}

/**
 * Validates the body of `POST /api/keys`:
 * `{ name, scopes, rateLimit?: { limit, windowSeconds } | null, rateLimits?: [{ name, limit,
 * windowSeconds, burst? }] | null, quota?: { remaining, refill?: { amount, interval } } | null,
 * expiresAt?: string | null, environment?, metadata?, ipAllowlist? }`.
 */
export function parseIssueBody(body: Record<string, unknown>, now: Date = new Date()): IssueInput {
  rejectUnknownMembers(body, ISSUE_BODY);
  const { name, scopes, rateLimit, rateLimits, quota, expiresAt } = body;
  if (typeof name !== 'string' || name.trim() === '') throw invalid('name', '`name` is required: a non-empty string');
  if (name.length > MAX_NAME_LENGTH) throw invalid('name', `\`name\` is longer than ${MAX_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalid('name', '`name` must not contain control characters');
  const input: IssueInput = { name: name.trim(), scopes: parseScopes(scopes) };
  if (rateLimit !== undefined && rateLimit !== null) input.rateLimit = parseRateLimit(rateLimit);
  // The keyring validates these field by field (400 invalid_request naming the field).
  if (rateLimits !== undefined && rateLimits !== null) input.rateLimits = rateLimits as NonNullable<UpdateLimitsInput['rateLimits']>;
  if (quota !== undefined && quota !== null) input.quota = quota as QuotaInput;
  if (expiresAt !== undefined && expiresAt !== null) {
    const date = typeof expiresAt === 'string' ? parseInstant(expiresAt) : undefined;
    if (date === undefined) throw invalid('expiresAt', '`expiresAt` must be an RFC 3339 timestamp with an offset, from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z in UTC, e.g. 2030-01-31T00:00:00Z');
    if (date.getTime() <= now.getTime()) throw invalid('expiresAt', '`expiresAt` must be in the future');
    input.expiresAt = date;
  }
  // The keyring validates these three and names the field on a 400.
  if (body.environment !== undefined) input.environment = body.environment as string | null;
  if (body.metadata !== undefined) input.metadata = body.metadata as KeyMetadata | null;
  if (body.ipAllowlist !== undefined) input.ipAllowlist = body.ipAllowlist as string[] | null;
  if (body.ownerId !== undefined) input.ownerId = body.ownerId as string | null;
  return input;
}

/** Validates the body of `PATCH /api/keys/{id}`: `{ metadata?, ipAllowlist? }`, at least one. */
export function parseUpdateBody(body: Record<string, unknown>): { metadata?: KeyMetadata | null; ipAllowlist?: string[] | null } {
  rejectUnknownMembers(body, UPDATE_BODY);
  const out: { metadata?: KeyMetadata | null; ipAllowlist?: string[] | null } = {};
  if (body.metadata !== undefined) out.metadata = body.metadata as KeyMetadata | null;
  if (body.ipAllowlist !== undefined) out.ipAllowlist = body.ipAllowlist as string[] | null;
  if (Object.keys(out).length === 0) throw invalid('body', 'Send `metadata` and/or `ipAllowlist` to change');
  return out;
}

/**
 * Validates `scopes`: an array of known scopes, duplicates dropped. It may be empty: a key
 * can get its permissions from roles (`PUT /api/keys/{id}/roles`) or its owner's roles.
 */
export function parseScopes(value: unknown, field = 'scopes'): Scope[] {
  if (!Array.isArray(value)) {
    throw invalid(field, `\`${field}\` must be an array of scopes: ${SCOPES.join(', ')} (empty: only what the key's roles grant)`);
  }
  for (const [i, scope] of value.entries()) {
    if (typeof scope !== 'string' || !(SCOPES as readonly string[]).includes(scope)) {
      // Named by position: a scope this API does not know is client text, not echoed.
      throw invalid(field, `\`${field}[${i}]\` is ${typeof scope === 'string' ? 'an unknown scope' : `not a string (${typeof scope})`}; known scopes: ${SCOPES.join(', ')}`);
    }
  }
  return [...new Set(value as Scope[])];
}

function parseRateLimit(value: unknown): { limit: number; windowSeconds: number } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('rateLimit', '`rateLimit` must be an object `{ limit, windowSeconds }` or null');
  }
  const record = value as Record<string, unknown>;
  rejectUnknownMembers(record, { limit: true, windowSeconds: true }, 'rateLimit');
  if (!isIntegerIn(record.limit, 1, MAX_RATE_LIMIT)) {
    throw invalid('rateLimit.limit', `\`rateLimit.limit\` must be an integer from 1 to ${MAX_RATE_LIMIT}`);
  }
  if (!isIntegerIn(record.windowSeconds, 1, MAX_WINDOW_SECONDS)) {
    throw invalid('rateLimit.windowSeconds', `\`rateLimit.windowSeconds\` must be an integer from 1 to ${MAX_WINDOW_SECONDS}`);
  }
  return { limit: record.limit, windowSeconds: record.windowSeconds };
}

/** Validates the body of `POST /api/keys/{id}/rotate`: `{ overlapSeconds }`, required. */
export function parseRotateBody(body: Record<string, unknown>): { overlapSeconds: number } {
  rejectUnknownMembers(body, ROTATE_BODY);
  const { overlapSeconds } = body;
  if (!isIntegerIn(overlapSeconds, 0, MAX_OVERLAP_SECONDS)) {
    throw invalid(
      'overlapSeconds',
      `\`overlapSeconds\` is required: an integer from 0 (old key stops at once) to ${MAX_OVERLAP_SECONDS} (30 days)`,
    );
  }
  return { overlapSeconds };
}

/**
 * Validates the body of `PATCH /api/keys/{id}/limits`: `{ rateLimit?, rateLimits?, quota? }`
 * (a field left out is kept, `null` removes it). `quota: { remaining?, refill? }`: with
 * `remaining` left out, the current live count is kept (only the refill changes).
 */
export function parseLimitsBody(body: Record<string, unknown>): { rateLimit?: unknown; rateLimits?: unknown; quota?: { remaining?: unknown; refill?: unknown } | null } {
  rejectUnknownMembers(body, LIMITS_BODY);
  if (Object.keys(body).length === 0) throw invalid('body', 'Send at least one of `rateLimit`, `rateLimits`, `quota`.');
  const { quota } = body;
  if (quota !== undefined && quota !== null) {
    if (typeof quota !== 'object' || Array.isArray(quota)) throw invalid('quota', '`quota` must be `{ remaining?, refill? }` or null');
  }
  return body as ReturnType<typeof parseLimitsBody>;
}

/**
 * The admin handlers over `keyring` (through `createKeyAdmin`). Bodies arrive parsed (see
 * `parseJsonObject`); each changing handler takes the audit `context` of the request
 * (`adminContext`: the admin key's id and the request id).
 */
export function createKeyAdminHandlers(deps: { keyring: Keyring; limiter?: Pick<RateLimiterWithState, 'readQuota'>; now?: () => Date }) {
  const { keyring, limiter, now = () => new Date() } = deps;
  const admin = createKeyAdmin(keyring);

  /** The record with its quota's live count, read from the quota store (spends nothing). */
  async function withLiveQuota(record: KeyRecord): Promise<Record<string, unknown>> {
    const json = JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
    if (record.quota === null || limiter === undefined) return json;
    // A key of an owner keeps its count in the owner's partition (a Redis Cluster slot).
    const live = await limiter.readQuota(record.id, record.quota, record.ownerId);
    return {
      ...json,
      quota: { ...(json.quota as object), remaining: live.remaining, nextRefillAt: live.nextRefillAt?.toISOString() ?? null },
    };
  }

  return Object.freeze({
    withLiveQuota,
    async issue(body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      const input = parseIssueBody(body, now());
      const { key, record } = await admin.issue(input, context);
      return { status: 201, headers: HOLDS_A_KEY, body: { key, ...(await withLiveQuota(record)) } };
    },
    /** The list shows each quota as last set (`remaining` at `setAt`); `GET /api/keys/{id}` shows the live count. */
    async list(plan: PagePlan): Promise<{ rows: KeyRecord[]; total?: number }> {
      const { records, total } = await admin.list(plan);
      return total === undefined ? { rows: records } : { rows: records, total };
    },
    async get(id: string): Promise<AppResponse> {
      return { status: 200, body: await withLiveQuota(await admin.get(id)) };
    },
    /** `PATCH /api/keys/{id}/limits`: set rate limits, `remaining` and/or the refill. */
    async updateLimits(id: string, body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      const { quota, ...limits } = parseLimitsBody(body);
      const input: UpdateLimitsInput = { ...(limits as UpdateLimitsInput) };
      if (quota === null) input.quota = null;
      else if (quota !== undefined) {
        let { remaining } = quota;
        if (remaining === undefined) {
          // Only the refill changes: keep the live count (read now; a spend racing this
          // update may be counted twice, never given back).
          const current = await admin.get(id);
          if (current.quota === null) throw invalid('quota.remaining', 'This key has no quota yet: send `quota.remaining` too.');
          remaining = limiter === undefined ? current.quota.remaining : (await limiter.readQuota(id, current.quota, current.ownerId)).remaining;
        }
        input.quota = { remaining: remaining as number, ...(quota.refill === undefined ? {} : { refill: quota.refill as NonNullable<QuotaInput['refill']> | null }) };
      }
      return { status: 200, body: await withLiveQuota(await admin.updateLimits(id, input, context)) };
    },
    async rotate(id: string, body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      const { overlapSeconds } = parseRotateBody(body);
      const { key, record } = await admin.rotate(id, { overlapSeconds }, context);
      return { status: 201, headers: HOLDS_A_KEY, body: { key, ...(await withLiveQuota(record)) } };
    },
    async update(id: string, body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      return { status: 200, body: await admin.update(id, parseUpdateBody(body), context) };
    },
    async revoke(id: string, context?: AuditContext): Promise<AppResponse> {
      await admin.revoke(id, context);
      return { status: 204 };
    },
  });
}
