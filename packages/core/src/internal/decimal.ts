/**
 * Exact comparison of decimal text (`-12.50`), the way PostgreSQL `numeric` compares:
 * `1.5` equals `1.50`, `-0` equals `0`. No floating point, so 30-digit values stay exact.
 * @module
 */

/** Strict decimal text: optional minus, no leading zeros, optional fraction, no exponent. */
export const DECIMAL_PATTERN: RegExp = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/** Strict integer text, as PostgreSQL prints `bigint`. */
export const INTEGER_PATTERN: RegExp = /^-?(0|[1-9][0-9]*)$/;

function split(text: string): { negative: boolean; int: string; frac: string } {
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const dot = body.indexOf('.');
  const int = dot < 0 ? body : body.slice(0, dot);
  const frac = (dot < 0 ? '' : body.slice(dot + 1)).replace(/0+$/, '');
  // -0 and -0.000 are zero, not negative.
  return { negative: negative && (int !== '0' || frac !== ''), int, frac };
}

function compareMagnitude(a: { int: string; frac: string }, b: { int: string; frac: string }): number {
  if (a.int.length !== b.int.length) return a.int.length < b.int.length ? -1 : 1;
  if (a.int !== b.int) return a.int < b.int ? -1 : 1;
  // Trailing zeros are stripped, so plain string order is numeric order of fractions.
  if (a.frac !== b.frac) return a.frac < b.frac ? -1 : 1;
  return 0;
}

/** Sign of `a - b` for two strings matching {@link DECIMAL_PATTERN}. */
export function compareDecimal(a: string, b: string): number {
  if (a === b) return 0;
  const x = split(a);
  const y = split(b);
  if (x.negative !== y.negative) return x.negative ? -1 : 1;
  const m = compareMagnitude(x, y);
  // `0 - m`, not `-m`: equal negatives compare as 0, never -0 (which `Object.is` and `toBe` tell apart).
  return x.negative ? 0 - m : m;
}

/**
 * A finite number as plain decimal text (`1e-7` → `0.0000001`): the exact text of the
 * shortest round-tripping spelling, without the exponent `String()` uses below 1e-6
 * and from 1e21, which {@link DECIMAL_PATTERN} (and `numeric` input habits) refuse.
 */
export function numberToDecimal(n: number): string {
  const text = String(n === 0 ? 0 : n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (m === null) return text;
  const digits = `${m[2]}${m[3] ?? ''}`;
  const point = 1 + Number(m[4]);
  const body =
    point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return `${m[1]}${body}`;
}
