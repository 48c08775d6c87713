/**
 * Audit retention (`AUDIT_RETENTION_DAYS`, docs/audit.md): entries older than the retention
 * are pruned at start, then every hour. The log is append-only otherwise; this is the one
 * thing that ever removes an entry, and it removes the oldest only.
 * @module
 */
import type { AuditStore } from '@keyset/core';
import type { Logger } from '../logger.ts';

/** How often the log is pruned: an hour's worth of entries past the retention is nothing to keep a timer busier for. */
const PRUNE_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * Prunes `audit` now (awaited, so a start-up failure is logged before the server listens)
 * and every hour; `stop()` ends the timer. A failing prune is logged and retried next time:
 * keeping entries longer is safe.
 */
export async function startAuditRetention(deps: { audit: AuditStore; days: number; logger: Logger; now?: () => number }): Promise<{ stop: () => void }> {
  const { audit, days, logger, now = Date.now } = deps;
  const prune = async (): Promise<void> => {
    try {
      const pruned = await audit.prune(new Date(now() - days * DAY_MS));
      if (pruned > 0) logger.info({ pruned, retentionDays: days }, 'pruned audit entries past their retention');
    } catch (error) {
      logger.warn({ err: error }, 'pruning the audit log failed; retrying within the hour');
    }
  };
  await prune();
  const timer = setInterval(() => void prune(), PRUNE_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
