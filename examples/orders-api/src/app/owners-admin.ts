/**
 * `/api/owners`: create, list, inspect, update and delete owners, and list an owner's keys
 * (scope `keys:admin`). An owner is the customer several keys belong to: its rate limits
 * are shared by all of them (docs/rate-limits.md, "Key and owner limits"); disabling or
 * deleting it refuses all its keys on every instance before the response is sent.
 * @module
 */
import { createOwnerAdmin, type CreateOwnerInput, type KeyRecord, type Keyring, type OwnerRecord, type PagePlan, type UpdateOwnerInput } from '@keyset/core';
import type { KnownOptions } from '@keyset/core/adapter';
import type { AppResponse } from './app-types.ts';
import { rejectUnknownMembers, type BodyShape } from './validation.ts';

const RATE_LIMIT = { name: true, limit: true, windowSeconds: true, burst: true } as const;
const CREATE_BODY = { id: true, metadata: true, rateLimits: RATE_LIMIT } as const satisfies KnownOptions<CreateOwnerInput> & BodyShape;
const UPDATE_BODY = { metadata: true, rateLimits: RATE_LIMIT, disabled: true } as const satisfies KnownOptions<UpdateOwnerInput> & BodyShape;

/** The owner handlers over `keyring` (through `createOwnerAdmin`). Bodies arrive parsed; the core validates each field (400 naming it). */
export function createOwnerAdminHandlers(deps: { keyring: Keyring }) {
  const admin = createOwnerAdmin(deps.keyring);
  return Object.freeze({
    async create(body: Record<string, unknown>): Promise<AppResponse> {
      rejectUnknownMembers(body, CREATE_BODY);
      return { status: 201, body: await admin.create(body as unknown as CreateOwnerInput) };
    },
    async list(plan: PagePlan): Promise<{ rows: OwnerRecord[]; total?: number }> {
      const { records, total } = await admin.list(plan);
      return total === undefined ? { rows: records } : { rows: records, total };
    },
    async get(id: string): Promise<AppResponse> {
      return { status: 200, body: await admin.get(id) };
    },
    async update(id: string, body: Record<string, unknown>): Promise<AppResponse> {
      rejectUnknownMembers(body, UPDATE_BODY);
      return { status: 200, body: await admin.update(id, body as UpdateOwnerInput) };
    },
    async remove(id: string): Promise<AppResponse> {
      await admin.delete(id);
      return { status: 204 };
    },
    async listKeys(id: string, plan: PagePlan): Promise<{ rows: KeyRecord[]; total?: number }> {
      const { records, total } = await admin.listKeys(id, plan);
      return total === undefined ? { rows: records } : { rows: records, total };
    },
  });
}
