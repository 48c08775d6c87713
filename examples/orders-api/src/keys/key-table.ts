/**
 * Human-readable renderings of key records for the CLI: a table for `list`, a block
 * for `show`. Only what a record holds: never a digest, never key text beyond `…last4`.
 * @module
 */
import type { KeyRecord } from '@keyset/core';

/** `active`, `rotating` (two live secrets), `expired` or `revoked`, as of `now`. */
export function keyStatus(record: KeyRecord, now = Date.now()): string {
  if (record.revokedAt !== null && record.revokedAt.getTime() <= now) return 'revoked';
  if (record.expiresAt !== null && record.expiresAt.getTime() <= now) return 'expired';
  const live = record.secrets.filter((s) => s.expiresAt === null || s.expiresAt.getTime() > now);
  if (live.length === 0) return 'expired';
  return live.length > 1 ? 'rotating' : 'active';
}

const day = (d: Date | null): string => (d === null ? '-' : d.toISOString().slice(0, 19).replace('T', ' '));

/** The `pnpm keys list` table: one line per key, newest first; LEAKED is when secret scanning first reported it. */
export function formatTable(records: readonly KeyRecord[]): string {
  const rows = records.map((r) => [r.id, r.name, r.scopes.join(','), `…${r.secrets[0]?.last4 ?? ''}`, keyStatus(r), day(r.createdAt), day(r.lastUsedAt), day(r.leakedAt)]);
  const head = ['ID', 'NAME', 'SCOPES', 'KEY', 'STATUS', 'CREATED (UTC)', 'LAST USED (UTC)', 'LEAKED (UTC)'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) => `${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`;
  return line(head) + rows.map(line).join('');
}

/** The `pnpm keys show` block: every field and secret of one key. */
export function formatRecord(r: KeyRecord): string {
  const lines = [
    `id:         ${r.id}`,
    `name:       ${r.name}`,
    `scopes:     ${r.scopes.join(', ')}`,
    `status:     ${keyStatus(r)}`,
    `rate limit: ${r.rateLimits === null ? 'server default' : r.rateLimits.map((l) => `${l.limit} per ${l.windowSeconds}s`).join(' and ')}`,
    `metadata:   ${Object.keys(r.metadata).length === 0 ? 'none' : JSON.stringify(r.metadata)}`,
    `ip allowed: ${r.ipAllowlist === null ? 'any address' : r.ipAllowlist.join(', ')}`,
    `created:    ${day(r.createdAt)}`,
    `last used:  ${day(r.lastUsedAt)}`,
    `expires:    ${day(r.expiresAt)}`,
    `revoked:    ${day(r.revokedAt)}`,
    // The URL was cleaned of key text before it was stored (KeyRecord.leakUrl).
    `leaked:     ${r.leakedAt === null ? '-' : `${day(r.leakedAt)}${r.leakUrl === null ? '' : ` at ${r.leakUrl}`}`}`,
    'secrets:',
    ...r.secrets.map((s) => `  …${s.last4}  created ${day(s.createdAt)}  last used ${day(s.lastUsedAt)}  expires ${day(s.expiresAt)}`),
  ];
  return `${lines.join('\n')}\n`;
}
