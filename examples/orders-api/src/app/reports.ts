/**
 * `GET /api/reports/daily?date=YYYY-MM-DD`: one UTC day's order totals. Amounts in
 * different currencies are never added together: the report has one entry per
 * currency. Revenue counts `paid` orders only; `orderCount` counts every order created
 * that day, whatever its status.
 * @module
 */
import type { SqlClient } from '../db/database.ts';
import type { AppResponse } from './app-types.ts';
import { invalid, isCalendarDate, singleParam } from './validation.ts';

/** Totals of one currency on one day. */
export interface CurrencyTotals {
  currency: string;
  /** Orders in this currency created that day, any status. */
  orderCount: number;
  /** Of those, orders with status `paid`. */
  paidCount: number;
  /** Sum of `amountCents` over paid orders. */
  revenueCents: number;
  /** `revenueCents / paidCount` rounded half up; `null` when nothing was paid. */
  averageCents: number | null;
}

/** The daily report body. */
export interface DailyReport {
  /** The UTC day, `YYYY-MM-DD`. */
  date: string;
  /** Orders created that day, all currencies and statuses. */
  orderCount: number;
  /** One entry per currency with orders that day, by currency code. */
  currencies: CurrencyTotals[];
}

// The range is half-open on the UTC day so the (created_at, id) index serves it.
// Sums come back as text: node-postgres and PGlite disagree on how to return bigint.
const DAILY_SQL = `
SELECT currency,
       count(*)::text AS order_count,
       count(*) FILTER (WHERE status = 'paid')::text AS paid_count,
       coalesce(sum(amount_cents) FILTER (WHERE status = 'paid'), 0)::text AS revenue_cents
FROM orders
WHERE created_at >= ($1::date)::timestamp AT TIME ZONE 'UTC'
  AND created_at <  ($1::date + 1)::timestamp AT TIME ZONE 'UTC'
GROUP BY currency
ORDER BY currency`;

interface DailyRow {
  currency: string;
  order_count: string;
  paid_count: string;
  revenue_cents: string;
}

/** Today's date in UTC, `YYYY-MM-DD`. */
export function todayUtc(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/**
 * The handler. `date` defaults to today (UTC); it must be a real calendar day, once.
 * Other query parameters are ignored.
 */
export function createReportHandlers(deps: { db: SqlClient; now?: () => Date }) {
  const { db, now = () => new Date() } = deps;
  return Object.freeze({
    async daily(input: { query: URLSearchParams }): Promise<AppResponse<DailyReport>> {
      const date = singleParam(input.query, 'date') ?? todayUtc(now());
      if (!isCalendarDate(date)) {
        throw invalid('date', '`date` must be a calendar day as YYYY-MM-DD (UTC), e.g. 2025-01-31');
      }
      const { rows } = await db.query<DailyRow>(DAILY_SQL, [date]);
      const currencies = rows.map((row): CurrencyTotals => {
        const paidCount = Number(row.paid_count);
        const revenueCents = Number(row.revenue_cents);
        return {
          currency: row.currency,
          orderCount: Number(row.order_count),
          paidCount,
          revenueCents,
          averageCents: paidCount === 0 ? null : Math.round(revenueCents / paidCount),
        };
      });
      const orderCount = currencies.reduce((sum, c) => sum + c.orderCount, 0);
      return { status: 200, body: { date, orderCount, currencies } };
    },
  });
}
