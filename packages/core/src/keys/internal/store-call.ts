/**
 * One way to call the `KeyStore`: whatever a store throws (a dropped connection, a
 * timeout) is logged with the operation and becomes a `KeysetError('unavailable')`, so an
 * outage is a 503 on every route and the driver's error stays in `cause`.
 * @module
 */
import { KeysetError } from '../../errors.ts';
import type { BestEffortLog } from './best-effort-log.ts';

/** Runs `call`; a rejection is logged and rethrown as `unavailable`. */
export async function storeCall<T>(log: BestEffortLog, operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    log.error({ err: error, operation }, 'key store unavailable');
    throw new KeysetError('unavailable', { detail: 'The key store is unavailable; try again shortly.', cause: error });
  }
}
