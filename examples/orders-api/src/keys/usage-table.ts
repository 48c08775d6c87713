/**
 * The CLI's `keys usage <id>` output: one line per bucket that saw a request (a day of
 * empty hours would bury the ones that count), then the totals.
 * @module
 */
import type { UsageRequests } from '@keyset/core';
import { USAGE_OUTCOMES } from '@keyset/core/adapter';

/** What `GET /api/keys/{id}/usage` answers, as far as the table reads it. */
interface UsageBody {
  keyId?: string;
  interval: string;
  from: string;
  to: string;
  buckets: { start: string; requests: UsageRequests; credits: number }[];
  totals: { requests: UsageRequests; credits: number };
}

const HEADINGS = ['START', ...USAGE_OUTCOMES.map((o) => o.toUpperCase()), 'CREDITS'];

/** The usage of a key as a text table. */
export function formatUsage(body: UsageBody): string {
  const row = (label: string, counts: { requests: UsageRequests; credits: number }): string[] => [label, ...USAGE_OUTCOMES.map((o) => String(counts.requests[o])), String(counts.credits)];
  const busy = body.buckets.filter((b) => b.credits > 0 || USAGE_OUTCOMES.some((o) => b.requests[o] > 0));
  const rows = [HEADINGS, ...busy.map((b) => row(b.start, b)), row('TOTAL', body.totals)];
  const widths = HEADINGS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd());
  const title = `Usage of key ${body.keyId ?? ''} from ${body.from} to ${body.to}, per ${body.interval} (buckets without requests left out):\n`;
  return `${title}${lines.join('\n')}\n`;
}
