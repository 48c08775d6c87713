/**
 * The key CLI's command line: its flags (`CLI_OPTIONS`, read by `node:util`'s `parseArgs`)
 * and what turns them into admin bodies, durations and lines of output. A malformed flag is
 * a `UsageError` (exit 2), found before the database opens.
 * @module
 */
import { createPaginator, keyListSort, type AuditContext, type PagePlan } from '@keyset/core';
import { randomBytes } from 'node:crypto';
import type { parseArgs } from 'node:util';
import { PAGE_LIMITS } from '../app/create-app.ts';
import { parseRate } from '../config.ts';

/** Every change the CLI makes is audited as made by `cli` (docs/audit.md). */
export const CLI_AUDIT: AuditContext = Object.freeze({ actor: 'cli' });

/** The flags every command may take; `parseArgs` refuses any other (strict). */
export const CLI_OPTIONS = {
  name: { type: 'string' },
  scopes: { type: 'string' },
  rate: { type: 'string' },
  expires: { type: 'string' },
  metadata: { type: 'string' },
  'ip-allowlist': { type: 'string' },
  overlap: { type: 'string' },
  quota: { type: 'string' },
  refill: { type: 'string' },
  mode: { type: 'string' },
  'quota-mode': { type: 'string' },
  owner: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  interval: { type: 'string' },
  permissions: { type: 'string' },
  description: { type: 'string' },
  set: { type: 'string' },
  disable: { type: 'boolean', default: false },
  enable: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The flags as parsed. */
export type CliFlags = ReturnType<typeof parseArgs<{ args: string[]; options: typeof CLI_OPTIONS; allowPositionals: true; strict: true }>>['values'];

/** Prints `json` with `--json`, else the `human` text. */
export type Print = (json: unknown, human: string) => void;

/** A malformed command line: exit 2, with the usage hint. */
export class UsageError extends Error {}

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `3600`, `30s`, `15m`, `1h`, `7d` → seconds, or `undefined`. */
export function parseDuration(text: string): number | undefined {
  const match = /^(0|[1-9][0-9]{0,9})([smhd])?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * (DURATION_UNITS[match[2] ?? 's'] ?? 1);
}

/**
 * Every record of a list, walked page by page with keyset's own cursors (newest first).
 * The cursors never leave this process, so a throwaway secret signs them.
 */
export async function walkAll<T extends { createdAt: Date; id: string }>(endpoint: string, list: (plan: PagePlan) => Promise<{ records: T[] }>): Promise<T[]> {
  const paginator = createPaginator<T>({ endpoint, sort: keyListSort, limits: PAGE_LIMITS, cursor: { secrets: [randomBytes(32).toString('base64url')] } });
  const all: T[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(PAGE_LIMITS.max) });
    if (cursor !== null) query.set('cursor', cursor);
    const plan = await paginator.plan(query);
    const { records } = await list(plan);
    const { body } = await paginator.page(plan, records, { url: 'http://cli.invalid/list' });
    all.push(...body.items);
    cursor = 'nextCursor' in body ? body.nextCursor : null;
  } while (cursor !== null);
  return all;
}

/** `--metadata` and `--ip-allowlist` as an admin body; on `update`, `none` removes either. */
export function attributesFromFlags(values: { metadata?: string | undefined; 'ip-allowlist'?: string | undefined }, update: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (values.metadata !== undefined) {
    if (update && values.metadata === 'none') body.metadata = null;
    else {
      try {
        body.metadata = JSON.parse(values.metadata) as unknown;
      } catch {
        throw new UsageError(`--metadata must be a JSON object, e.g. '{"tenant":"t_42"}'${update ? ', or none' : ''}`);
      }
    }
  }
  const allowlist = values['ip-allowlist'];
  if (allowlist !== undefined) body.ipAllowlist = update && allowlist === 'none' ? null : allowlist.split(',').map((s) => s.trim()).filter(Boolean);
  return body;
}

const REFILL = /^([1-9][0-9]{0,14})\/(daily|monthly|([1-9][0-9]{0,7})s)$/;

/**
 * `--rate`, `--quota`, `--refill` as an admin body. `update`: `default`/`none` remove, and
 * `--refill` alone keeps the credits left. Throws `UsageError` for a malformed flag.
 */
export function limitsFromFlags(
  values: { rate?: string | undefined; quota?: string | undefined; refill?: string | undefined; mode?: string | undefined; quotaMode?: string | undefined },
  update: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [flag, value] of [['--mode', values.mode], ['--quota-mode', values.quotaMode]] as const) {
    if (value !== undefined && value !== 'observe' && value !== 'enforce') throw new UsageError(`${flag} must be observe or enforce, got "${value}"`);
  }
  // Enforced is the default: only `observe` is sent.
  const mode = values.mode === 'observe' ? { mode: 'observe' } : {};
  if (values.mode !== undefined && (values.rate === undefined || values.rate === 'default')) throw new UsageError('--mode applies to the limits given with --rate');
  if (values.rate !== undefined) {
    if (update && values.rate === 'default') body.rateLimits = null;
    else {
      const parts = values.rate.split(',').map((part) => part.trim());
      const rates = parts.map((part) => {
        const rate = parseRate(part);
        if (!rate) throw new UsageError(`--rate must look like 10/1s, 600/1m or 10000/1h (comma-separated for several), got "${values.rate}"`);
        return { ...rate, name: part.slice(part.indexOf('/') + 1) };
      });
      if (rates.length === 1 && !update) body.rateLimit = { limit: rates[0]!.limit, windowSeconds: rates[0]!.windowSeconds, ...mode };
      else body.rateLimits = rates.length === 1 ? [{ limit: rates[0]!.limit, windowSeconds: rates[0]!.windowSeconds, ...mode }] : rates.map((r) => ({ ...r, ...mode }));
    }
  }
  let refill: unknown;
  if (values.refill !== undefined) {
    const match = REFILL.exec(values.refill.trim());
    if (update && values.refill === 'none') refill = null;
    else if (!match) throw new UsageError(`--refill must look like 1000/monthly, 100/daily or 50/3600s, got "${values.refill}"`);
    else refill = { amount: Number(match[1]), interval: match[3] === undefined ? match[2] : Number(match[3]) };
  }
  if (values.quota !== undefined) {
    if (update && values.quota === 'none') {
      if (values.refill !== undefined) throw new UsageError('--quota none removes the quota: drop --refill');
      body.quota = null;
    } else {
      if (!/^(0|[1-9][0-9]{0,14})$/.test(values.quota)) throw new UsageError(`--quota must be a number of credits, got "${values.quota}"`);
      body.quota = { remaining: Number(values.quota), ...(refill === undefined ? {} : { refill }), ...(values.quotaMode === undefined ? {} : { mode: values.quotaMode }) };
    }
  } else if (refill !== undefined) {
    if (!update) throw new UsageError('--refill needs --quota <credits>');
    body.quota = { refill };
  }
  // With --quota <credits> the mode went into the new quota; alone, the current quota switches, its count kept.
  if (values.quotaMode !== undefined && values.quota === undefined) {
    if (!update || body.quota !== undefined) throw new UsageError('--quota-mode goes with --quota <credits>, or alone to switch the current quota');
    body.quotaMode = values.quotaMode;
  } else if (values.quotaMode !== undefined && body.quota === null) throw new UsageError('--quota none removes the quota: drop --quota-mode');
  return body;
}

/** `quota: 12 credits left (refills to 50 monthly, next 2026-02-01T00:00:00.000Z)`, or nothing. */
export function quotaLine(record: unknown): string {
  const quota = (record as { quota?: { remaining: number; refill: { amount: number; interval: unknown } | null; nextRefillAt?: string | null; mode?: string } | null }).quota;
  if (quota === null || quota === undefined) return 'quota:      none\n';
  const refill = quota.refill === null ? 'no refill' : `refills to ${quota.refill.amount} ${typeof quota.refill.interval === 'number' ? `every ${quota.refill.interval}s` : String(quota.refill.interval)}, next ${quota.nextRefillAt ?? '?'}`;
  return `quota:      ${quota.remaining} credits left (${refill})${quota.mode === 'observe' ? ', observed: counted, never refusing' : ''}\n`;
}

export function expectArgs(rest: readonly string[], count: 0 | 1, usage: string): string {
  if (rest.length !== count) throw new UsageError(`usage: npx -y pnpm@10.34.9 keys ${usage}`);
  return rest[0] ?? '';
}
