/**
 * The gate in front of the usage reads' connections: at most `max` reads run at once,
 * server-wide (every adapter's routes share it), as many as the reads have connections,
 * so none waits for one. The next is refused at once with 429 `usage_reads_busy` and
 * `Retry-After`, instead of queueing behind reads of large ranges that may all run to
 * their timeout (docs/usage.md, "Reads").
 * @module
 */
import { KeysetError } from '@keyset/core';
import type { SqlClient } from './database.ts';

/** What `Retry-After` says to a refused read: about the time the largest read takes. */
const BUSY_RETRY_AFTER_SECONDS = 1;

/** `client`, refusing a query while `max` of its queries are in progress. */
export function limitUsageReads(client: SqlClient, max: number): SqlClient {
  let running = 0;
  return {
    async query<Row>(text: string, params?: unknown[]): Promise<{ rows: Row[] }> {
      if (running >= max) {
        throw new KeysetError('usage_reads_busy', {
          detail: `${max} usage reads are in progress, the most this server runs at once; retry in ${BUSY_RETRY_AFTER_SECONDS} s`,
          extensions: { retry_after: BUSY_RETRY_AFTER_SECONDS },
          headers: { 'Retry-After': String(BUSY_RETRY_AFTER_SECONDS) },
        });
      }
      running++;
      try {
        return await client.query<Row>(text, params);
      } finally {
        running--;
      }
    },
  };
}
