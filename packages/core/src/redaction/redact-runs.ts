/**
 * Client text made safe to echo or log by construction, without recognising anything:
 * a key's secret is letters and digits only, so text in which no 8 letters and digits
 * stand together can hold no 8 characters of one in a row, whatever was done to the key
 * (separators swapped, characters cut, deleted or typed in, encoded).
 * @module
 */
import { decodeAsciiFully, redactText } from './redact-text.ts';

// Runs of 8 or more: one more than the 3 + 4 characters shown of each.
const LONG_RUN = /[0-9A-Za-z]{8,}/g;
const HAS_LONG_RUN = /[0-9A-Za-z]{8}/;

/**
 * `text` with every run of 8 or more letters and digits shown as its first 3 and last 4
 * characters (`windowSecond` → `win…cond`), after whole keys are redacted to `…abcd`
 * (`redactText`). Percent-encoding is looked through: text that needs a change is
 * returned decoded; text that needs none is returned as it is (the same string). No
 * output holds more than 7 letters and digits in a row, so no 8 characters of a secret.
 *
 * For what a client sent and gets echoed (a problem's `instance`, an unknown field's
 * name) or what an access log writes (path segments, query names and values). Not for
 * server text: it would cut `packages` in a file name to `pac…ages` as well.
 *
 * @example
 * ```ts
 * redactRuns('/api/keys/key_7Hq2mXbP0aLr9sVtY3eWcN'); // '/api/keys/key_7Hq…eWcN'
 * redactRuns('?status=paid'); // '?status=paid'
 * ```
 */
export function redactRuns(text: string): string {
  if (typeof text !== 'string') return '';
  const decoded = text.indexOf('%') < 0 ? text : decodeAsciiFully(text);
  // Encoded more often than anything has a reason to be: shown as its length only.
  if (decoded === undefined) return `…(${text.length} characters)`;
  if (!HAS_LONG_RUN.test(decoded)) return text;
  return redactText(decoded).replace(LONG_RUN, (run) => `${run.slice(0, 3)}…${run.slice(-4)}`);
}
