/**
 * `GET /api/orders` filters: `status` (one of the seeded statuses; repeat it for any of
 * several) and `customer` (exact). Parsed once, by the orders paginator, so every server
 * binds them into the cursor alike and the handler reads them from the plan; every bad
 * value is a 400 `invalid_request` naming the parameter.
 * @module
 */
import { invalid, singleParam } from './validation.ts';

/** Order statuses, as seeded; the canonical order of `status` filters. */
export const ORDER_STATUSES = Object.freeze(['paid', 'pending', 'refunded', 'cancelled'] as const);

/** One order status. */
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Longest `customer` accepted (the seeded ids are `cust_0001`…; a longer one matches nothing anyway). */
export const MAX_CUSTOMER_LENGTH = 100;

/**
 * The filters of one request, canonical: `status` deduplicated in `ORDER_STATUSES` order, so
 * `status=pending&status=paid` and `status=paid&status=pending&status=paid` share cursors.
 */
// A type alias, not an interface: it must be assignable to the paginator's `Record<string, unknown>`.
export type OrderFilters = {
  status?: readonly OrderStatus[];
  customer?: string;
};

/**
 * Reads the filters from the raw query. Throws 400 `invalid_request` with `field: 'status'`
 * for an unknown or empty status, and with `field: 'customer'` for a repeated, empty or
 * over-long customer, or one with a control character (U+0000 would fail the query).
 *
 * @example
 * ```ts
 * orderFilters(new URLSearchParams('status=pending&status=paid&customer=cust_0042'));
 * // → { status: ['paid', 'pending'], customer: 'cust_0042' }
 * ```
 */
export function orderFilters(query: URLSearchParams): OrderFilters {
  const filters: OrderFilters = {};
  const statuses = query.getAll('status');
  if (statuses.length > 0) {
    for (const status of statuses) {
      if (!(ORDER_STATUSES as readonly string[]).includes(status)) {
        throw invalid(
          'status',
          `\`status\` has an unknown value; allowed: ${ORDER_STATUSES.map((s) => `\`${s}\``).join(', ')} (repeat \`status\` for any of several)`,
        );
      }
    }
    filters.status = ORDER_STATUSES.filter((s) => statuses.includes(s));
  }
  const customer = singleParam(query, 'customer');
  if (customer !== undefined) {
    if (customer.length > MAX_CUSTOMER_LENGTH) throw invalid('customer', `\`customer\` must be at most ${MAX_CUSTOMER_LENGTH} characters`);
    // PostgreSQL text refuses U+0000 (a query error, so a 500); no customer id holds a control character.
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(customer)) throw invalid('customer', '`customer` must not contain control characters');
    filters.customer = customer;
  }
  return filters;
}

/**
 * The SQL condition of `filters` over the orders table, with its parameters numbered from
 * `$(paramOffset + 1)`: `TRUE` without filters. One status is an equality (the
 * `(status, …)` indexes serve it); several are `= ANY($n::text[])`.
 */
export function orderFilterSql(filters: OrderFilters | undefined, paramOffset = 0): { where: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const status = filters?.status;
  if (status !== undefined && status.length > 0) {
    params.push(status.length === 1 ? status[0] : [...status]);
    parts.push(status.length === 1 ? `status = $${paramOffset + params.length}` : `status = ANY($${paramOffset + params.length}::text[])`);
  }
  if (filters?.customer !== undefined) {
    params.push(filters.customer);
    parts.push(`customer = $${paramOffset + params.length}`);
  }
  return { where: parts.length === 0 ? 'TRUE' : parts.join(' AND '), params };
}
