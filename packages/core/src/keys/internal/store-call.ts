/**
 * One way to call the `KeyStore`: whatever a store throws (a dropped connection, a
 * timeout) is logged with the operation and becomes a `KeysetError('unavailable')`, so an
 * outage is a 503 on every route and the driver's error stays in `cause`. The log is the
 * keyring's failure log: one line per kind of failure and interval, not one per request.
 * @module
 */
import { KeysetError } from '../../errors.ts';
import type { BestEffortLog } from './best-effort-log.ts';

/** Runs `call`; a rejection is logged (once per interval and kind) and rethrown as `unavailable`. */
export async function storeCall<T>(log: BestEffortLog, operation: string, call: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await call();
  } catch (error) {
    log.storeFailed(operation, error);
    throw new KeysetError('unavailable', { detail: 'The key store is unavailable; try again shortly.', cause: error });
  }
  log.storeAnswered(operation);
  return result;
}
