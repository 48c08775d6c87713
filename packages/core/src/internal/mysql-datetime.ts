/**
 * Timestamp cursor values as MySQL/MariaDB `DATETIME(6)` literals. Those types carry no
 * zone and accept neither an offset suffix nor `infinity`, so the instant is written in
 * UTC as `YYYY-MM-DD HH:MM:SS.ffffff` (store `DATETIME(6)` values in UTC, or run the
 * session with `time_zone = '+00:00'` for `TIMESTAMP(6)`).
 * @module
 */
import { parseTimestamp } from './timestamp.ts';

/** `text` (any form `parseTimestamp` accepts) as a UTC `DATETIME(6)` literal. */
export function toMysqlDatetime(text: string): string {
  const instant = parseTimestamp(text);
  if (instant === undefined) throw new TypeError(`not a timestamp: ${JSON.stringify(text.slice(0, 40))}`);
  const ms = instant.seconds * 1000;
  // DATETIME's range: 1000-01-01 00:00:00.000000 to 9999-12-31 23:59:59.999999.
  if (!Number.isFinite(ms) || ms < -30_610_224_000_000 || ms > 253_402_300_799_000) {
    throw new TypeError(`timestamp ${JSON.stringify(text.slice(0, 40))} is outside the MySQL DATETIME range`);
  }
  const iso = new Date(ms).toISOString(); // 1000-01-01T00:00:00.000Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${String(instant.micros).padStart(6, '0')}`;
}
