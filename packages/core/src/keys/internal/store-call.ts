/**
 * One way to call the `KeyStore`: whatever a store throws (a dropped connection, a
 * timeout) is logged with the operation and becomes a `KeysetError('unavailable')`, so an
 * outage is a 503 on every route and the driver's error stays in `cause`. The log is the
 * keyring's failure log: one line per kind of failure and interval, not one per request.
 * A `ConfigError` (a store whose tables were never migrated) is logged too but passes as
 * it is: waiting will not fix it, so "unavailable, try again shortly" would mislead (the
 * quota step does the same).
 * @module
 */
import { ConfigError, KeysetError } from '../../errors.ts';
import type { BestEffortLog } from './best-effort-log.ts';

/** Runs `call`; a rejection is logged (once per interval and kind) and rethrown as `unavailable` (a `ConfigError` as it is). */
export async function storeCall<T>(log: BestEffortLog, operation: string, call: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await call();
  } catch (error) {
    log.storeFailed(operation, error);
    if (error instanceof ConfigError) throw error;
    throw new KeysetError('unavailable', { detail: 'The key store is unavailable; try again shortly.', cause: error });
  }
  log.storeAnswered(operation);
  return result;
}
