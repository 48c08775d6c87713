/**
 * `/api/owners`: create, list, inspect, update and delete owners, and list an owner's keys
 * (scope `keys:admin`). An owner is the customer several keys belong to: its rate limits
 * and its quota are shared by all of them (docs/rate-limits.md, "Key and owner limits"); disabling or
 * deleting it refuses all its keys on every instance before the response is sent.
 * @module
 */
import {
  createOwnerAdmin,
  type AuditContext,
  type CreateOwnerInput,
  type KeyRecord,
  type Keyring,
  type OwnerRecord,
  type PagePlan,
  type QuotaInput,
  type RateLimiterWithState,
  type UpdateOwnerInput,
} from '@keyset/core';
import type { KnownOptions } from '@keyset/core/adapter';
import type { AppResponse } from './app-types.ts';
import { QUOTA, RATE_LIMIT } from './keys-admin.ts';
import { invalid, rejectUnknownMembers, type BodyShape } from './validation.ts';

const CREATE_BODY = { id: true, metadata: true, rateLimits: RATE_LIMIT, quota: QUOTA } as const satisfies KnownOptions<CreateOwnerInput> & BodyShape;
const UPDATE_BODY = { metadata: true, rateLimits: RATE_LIMIT, quota: QUOTA, quotaMode: true, disabled: true } as const satisfies KnownOptions<UpdateOwnerInput> & BodyShape;

/**
 * The owner handlers over `keyring` (through `createOwnerAdmin`). Bodies arrive parsed; the
 * core validates each field (400 naming it). With `limiter`, an owner's quota is shown with
 * its live count (`remaining` now, `nextRefillAt`), as a key's is.
 */
export function createOwnerAdminHandlers(deps: { keyring: Keyring; limiter?: Pick<RateLimiterWithState, 'readOwnerQuota'> }) {
  const { limiter } = deps;
  const admin = createOwnerAdmin(deps.keyring);

  /** The record with its quota's live count, read from the quota store (spends nothing). */
  async function withLiveQuota(record: OwnerRecord): Promise<Record<string, unknown>> {
    const json = JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
    if (record.quota === null || limiter === undefined) return json;
    const live = await limiter.readOwnerQuota(record.id, record.quota);
    return { ...json, quota: { ...(json.quota as object), remaining: live.remaining, nextRefillAt: live.nextRefillAt?.toISOString() ?? null } };
  }

  return Object.freeze({
    withLiveQuota,
    async create(body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      rejectUnknownMembers(body, CREATE_BODY);
      return { status: 201, body: await withLiveQuota(await admin.create(body as unknown as CreateOwnerInput, context)) };
    },
    async list(plan: PagePlan): Promise<{ rows: OwnerRecord[]; total?: number }> {
      const { records, total } = await admin.list(plan);
      return total === undefined ? { rows: records } : { rows: records, total };
    },
    /** The list shows each quota as last set (`remaining` at `setAt`); `GET /api/owners/{id}` shows the live count. */
    async get(id: string): Promise<AppResponse> {
      return { status: 200, body: await withLiveQuota(await admin.get(id)) };
    },
    /** `quota: { refill }` without `remaining` keeps the live count and changes only the refill, as `PATCH /api/keys/{id}/limits` does. */
    async update(id: string, body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      rejectUnknownMembers(body, UPDATE_BODY);
      const input = { ...body } as UpdateOwnerInput;
      const quota = body.quota as { remaining?: unknown; refill?: unknown } | null | undefined;
      if (quota !== undefined && quota !== null && typeof quota === 'object' && !Array.isArray(quota) && quota.remaining === undefined) {
        const current = await admin.get(id);
        if (current.quota === null) throw invalid('quota.remaining', 'This owner has no quota yet: send `quota.remaining` too.');
        const remaining = limiter === undefined ? current.quota.remaining : (await limiter.readOwnerQuota(id, current.quota)).remaining;
        input.quota = { ...(quota as QuotaInput), remaining };
      }
      return { status: 200, body: await withLiveQuota(await admin.update(id, input, context)) };
    },
    async remove(id: string, context?: AuditContext): Promise<AppResponse> {
      await admin.delete(id, context);
      return { status: 204 };
    },
    async listKeys(id: string, plan: PagePlan): Promise<{ rows: KeyRecord[]; total?: number }> {
      const { records, total } = await admin.listKeys(id, plan);
      return total === undefined ? { rows: records } : { rows: records, total };
    },
  });
}
