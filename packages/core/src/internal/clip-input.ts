/**
 * A developer's own configuration text shown in a `ConfigError` (an option name that is
 * no typo of a known one), only when short, and never with 8 letters and digits in a row
 * (`redactRuns`), in case a key was pasted there. Client text is never quoted this way:
 * a message names it instead, or echoes a word of a closed vocabulary (redact-echo.ts).
 * @module
 */
import { redactRuns } from '../redaction/redact-runs.ts';

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
