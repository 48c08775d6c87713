/**
 * The framework-neutral application: paginators, the API-key guard and the handlers of
 * every route, with the scope each route requires. `server-hono.ts` and
 * `server-express.ts` mount exactly this; neither decides anything on its own.
 * @module
 */
import {
  createMemoryUsageStore,
  createPaginator,
  type AuditEntry,
  type AuditStore,
  keyListSort,
  KeysetError,
  type ApiKeyGuard,
  type KeyRecord,
  type KeyScheme,
  type Keyring,
  type OwnerRecord,
  type RateLimiterWithState,
  type TotalOption,
  type UsageStore,
} from '@keyset/core';
import { auditListSort } from '@keyset/core/adapter';
import { createPostgresAuditStore } from '@keyset/postgres';
import type { SqlClient } from '../db/database.ts';
import { auditFilters, createAuditHandlers } from './audit.ts';
import { createKeyAdminHandlers } from './keys-admin.ts';
import { createOwnerAdminHandlers } from './owners-admin.ts';
import { createRoleAdminHandlers } from './roles-admin.ts';
import { ordersOpenApi } from './openapi.ts';
import { orderFilters } from './order-filters.ts';
import { createOrderHandlers, ORDER_SORT, ORDER_SORTABLE, type Order } from './orders.ts';
import { createReportHandlers } from './reports.ts';
import { createUsageAdminHandlers } from './usage-admin.ts';

/** The scope each route requires (least privilege: one scope per concern). */
export const ROUTE_SCOPES = Object.freeze({
  orders: Object.freeze(['orders:read']),
  reports: Object.freeze(['reports:read']),
  keys: Object.freeze(['keys:admin']),
});

/**
 * Credits a request spends from its key's usage quota (keys without a quota spend nothing):
 * a daily report aggregates a whole day, so it costs more than a page of orders.
 */
export const ROUTE_COSTS = Object.freeze({ orders: 1, reports: 5 });

/** Page sizes of every list endpoint: 20 by default, 100 at most, larger is refused. */
export const PAGE_LIMITS = Object.freeze({ default: 20, max: 100, overMax: 'reject' as const });

/** What the application is built from. */
export interface AppDependencies {
  db: SqlClient;
  keyring: Keyring;
  guard: ApiKeyGuard;
  /** Reads live quota counts for the admin routes. */
  limiter?: Pick<RateLimiterWithState, 'readQuota' | 'readOwnerQuota'>;
  /** Where the usage routes read (the key services' `usage.reads`). Absent: an empty memory store, nothing counted. */
  usage?: UsageStore;
  /** Cursor signing secrets: the first signs, any verifies. */
  cursorSecrets: readonly string[];
  /** How long a cursor stays valid after it was issued (the config's `CURSOR_TTL_SECONDS`). @default 86400 */
  cursorTtlSeconds?: number;
  /**
   * How `GET /api/orders` counts offset mode's `total`: the planner's estimate by default
   * (constant cost at any table size, marked `totalEstimated: true`), or `'exact'`,
   * `{ mode: 'exact', cap }`, `'none'` (docs/pagination.md, "Totals that scale").
   * @default 'estimated'
   */
  ordersTotal?: TotalOption;
  /**
   * The largest `offset` the list endpoints serve (the config's `MAX_OFFSET`); a larger one
   * is 400 `offset_too_large`. Absent: any offset.
   */
  maxOffset?: number;
  /** Where keys are read from: the keyring's `schemes` (the config's `KEY_SCHEMES`), for the OpenAPI document. @default ['ApiKey'] */
  keySchemes?: readonly KeyScheme[];
  /**
   * The audit log the key store writes, read by `GET /api/audit`.
   * @default `createPostgresAuditStore({ client: db })`: the log of the key store on `db`'s default tables, as `createKeyServices` makes it
   */
  audit?: AuditStore;
}

/** `GET /api/orders`'s total mode unless `ordersTotal` says otherwise. */
export const ORDERS_TOTAL: TotalOption = 'estimated';

/** Builds the application. */
export function createApp(deps: AppDependencies) {
  const { db, keyring, guard, limiter, usage = createMemoryUsageStore(), cursorSecrets, cursorTtlSeconds = 86_400, ordersTotal = ORDERS_TOTAL, maxOffset, keySchemes = ['ApiKey'] } = deps;
  const { audit = createPostgresAuditStore({ client: db }) } = deps;
  const cursor = { secrets: cursorSecrets, ttlSeconds: cursorTtlSeconds };
  const limits = maxOffset === undefined ? PAGE_LIMITS : Object.freeze({ ...PAGE_LIMITS, maxOffset });
  const paginators = Object.freeze({
    // The filters are the paginator's: parsed and bound into the cursor whichever server mounts it.
    orders: createPaginator<Order>({
      endpoint: 'GET /api/orders',
      sort: ORDER_SORT,
      sortable: ORDER_SORTABLE,
      filters: orderFilters,
      total: ordersTotal,
      limits,
      cursor,
    }),
    keys: createPaginator<KeyRecord>({ endpoint: 'GET /api/keys', sort: keyListSort, limits, cursor }),
    // Owners sort like keys (createdAt DESC, id DESC); an owner's keys are one more list of keys.
    owners: createPaginator<OwnerRecord>({ endpoint: 'GET /api/owners', sort: keyListSort, limits, cursor }),
    ownerKeys: createPaginator<KeyRecord>({ endpoint: 'GET /api/owners/{id}/keys', sort: keyListSort, limits, cursor }),
    audit: createPaginator<AuditEntry>({ endpoint: 'GET /api/audit', sort: auditListSort, filters: auditFilters, limits, cursor }),
  });
  return Object.freeze({
    guard,
    paginators,
    scopes: ROUTE_SCOPES,
    costs: ROUTE_COSTS,
    orders: createOrderHandlers({ db }),
    reports: createReportHandlers({ db }),
    keys: createKeyAdminHandlers(limiter === undefined ? { keyring } : { keyring, limiter }),
    owners: createOwnerAdminHandlers(limiter === undefined ? { keyring } : { keyring, limiter }),
    roles: createRoleAdminHandlers({ keyring }),
    audit: createAuditHandlers({ audit }),
    usage: createUsageAdminHandlers({ keyring, store: usage }),
    /** The OpenAPI 3.1 document served at `/openapi.json`. */
    openapi: ordersOpenApi({ limits, ordersTotal, keySchemes }),
    /** Liveness and database reachability, for load balancers: 503 `unavailable` when the database is down. */
    async health(): Promise<{ status: 'ok' }> {
      try {
        await db.query('SELECT 1');
      } catch (cause) {
        throw new KeysetError('unavailable', { detail: 'The database does not answer.', cause });
      }
      return { status: 'ok' };
    },
  });
}

/** The application the server builders mount. */
export type OrdersApp = ReturnType<typeof createApp>;
