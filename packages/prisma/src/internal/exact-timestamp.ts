/**
 * A cursor's timestamp as Prisma can send it: the millisecond `Date` at or before it, and
 * the microseconds past that millisecond (Prisma's driver adapters format a `Date`, and turn
 * any timestamp text into one, so a value is sent to the millisecond).
 * @module
 */
import { isoTimestamp } from '@keyset/core';

const ISO = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})(\d{3})Z$/;

/** An instant to the microsecond, split where Prisma can carry it. */
export interface ExactTimestamp {
  /** The millisecond the instant falls in. */
  floor: Date;
  /** Microseconds past `floor` (0–999): 0 means Prisma carries the value exactly. */
  rest: number;
  /** Microseconds since the epoch. */
  micros: bigint;
  /** ISO 8601 in UTC with six fractional digits. */
  iso: string;
}

/**
 * Splits cursor-form timestamp text (PostgreSQL's or ISO 8601, any zone). Throws
 * `TypeError` for what a JS `Date` cannot hold (`infinity`, years before 1 or after 9999).
 */
export function exactTimestamp(text: string): ExactTimestamp {
  const iso = isoTimestamp(text);
  const m = ISO.exec(iso);
  if (m === null) throw new TypeError(`@keyset/prisma: timestamp ${JSON.stringify(text)} is outside what Prisma's DateTime holds (years 1 to 9999)`);
  const ms = Date.parse(`${m[1]!}Z`);
  const rest = Number(m[2]);
  return { floor: new Date(ms), rest, micros: BigInt(ms) * 1000n + BigInt(rest), iso };
}
