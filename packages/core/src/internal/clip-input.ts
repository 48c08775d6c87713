/**
 * Client text shown in a message, only when short, and never with 8 letters and digits
 * in a row (`redactRuns`): a mistyped or mangled key (one character dropped, a `-` or
 * `_` typed into it, its separator swapped) looks like no key to any recogniser, and a
 * cut of it long enough to help the reader would show most of its secret.
 * @module
 */
import { redactRuns } from '../keys/redact-runs.ts';

/**
 * `text` through `redactRuns` (whole keys `…abcd`, every other run of 8 or more letters
 * and digits `abc…wxyz`); longer than `max` characters after that, it is not shown at all
 * (`…(57 characters)`). Identifiers worth echoing (a sort field, a status) are short.
 *
 * @example
 * ```ts
 * clipInput('amountCent', 32); // 'amo…Cent'
 * clipInput('paid', 32); // 'paid'
 * ```
 */
export function clipInput(text: string, max: number): string {
  const safe = redactRuns(text);
  return safe.length <= max ? safe : `…(${safe.length} characters)`;
}
