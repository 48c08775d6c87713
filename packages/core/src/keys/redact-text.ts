/**
 * Finds key-shaped text anywhere in a string, whatever stands before or after it, and
 * replaces it with `…` and its last 4 characters. Used on URLs (`redactUrl`), on every
 * problem member (`toProblem`), and by loggers on whole log lines.
 *
 * The shape: a key is `<prefix>_` and 38 base62 characters, and its secret part contains
 * no `_`. So every `_` followed by 38 or more letters and digits is redacted, together
 * with the prefix-like text before it, wherever it sits: inside a longer token (`…x`
 * after a key, letters before its prefix), between random characters, in a path segment.
 * An earlier match can never swallow a key's `_` (it is not a letter or digit), so keys
 * that touch each other or other tokens are each found. Any prefix matches, not only the
 * keyring's own: a leaked key of another environment is as secret.
 *
 * Linear time: every character is looked at a bounded number of times, whatever the
 * input (no backtracking regular expression runs on client text).
 * @module
 */
import { redactKey } from './redact-key.ts';

/**
 * Length of a key's secret part: `KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH` of
 * key-format.ts (a test checks they agree). Not imported from there, so that `errors.ts`
 * can use this module without an import cycle.
 */
const BODY = 38;
/** Longest prefix taken along with a match (the keyring's own limit). */
const MAX_PREFIX_LENGTH = 32;
/** `_` then the secret part, and any letters and digits glued after it. */
const SECRET_RUN = new RegExp(`_[0-9A-Za-z]{${BODY},}`, 'g');

function isLowercase(code: number): boolean {
  return code >= 97 && code <= 122;
}

function isPrefixChar(code: number): boolean {
  return isLowercase(code) || (code >= 48 && code <= 57) || code === 95; // a-z 0-9 _
}

/**
 * `text` with everything shaped like an API key replaced by `…` and its last 4
 * characters. Text without a key is returned unchanged (the same string).
 *
 * @example
 * ```ts
 * redactText('GET /api/orders/xacme_live_0123456789abcdefghijABCDEFGHIJKLMN1a2B!'); // 'GET /api/orders/…1a2B!'
 * ```
 */
export function redactText(text: string): string {
  if (typeof text !== 'string' || text.length <= BODY) return text;
  let out = '';
  let done = 0;
  SECRET_RUN.lastIndex = 0;
  for (let match = SECRET_RUN.exec(text); match !== null; match = SECRET_RUN.exec(text)) {
    const underscore = match.index;
    const end = underscore + match[0].length;
    // Take the prefix along (`acme_live`): it is not secret, but DESIGN §3 shows a key
    // as its last 4 characters only. Bounded, and never into text already written out.
    let start = underscore;
    const floor = Math.max(done, underscore - MAX_PREFIX_LENGTH);
    while (start > floor && isPrefixChar(text.charCodeAt(start - 1))) start--;
    while (start < underscore && !isLowercase(text.charCodeAt(start))) start++;
    out += text.slice(done, start) + redactKey(text.slice(start, end));
    done = end;
  }
  return done === 0 ? text : out + text.slice(done);
}

/**
 * `raw` (a path, a query name or value, as sent) with key-shaped text redacted, looking
 * through percent-encoding too: `acme_live_%41…`, or `%2541…` encoded twice, is still a
 * key. Text that decodes to something holding a key is returned decoded and redacted;
 * anything else is returned byte for byte. Never throws.
 */
export function redactEncodedText(raw: string): string {
  if (raw.indexOf('%') < 0) return redactText(raw);
  let decoded = raw;
  for (let round = 0; round < 4 && decoded.indexOf('%') >= 0; round++) {
    const next = decodeAscii(decoded);
    if (next === decoded) break;
    decoded = next;
  }
  // Decoding never breaks up a key written out plainly, so one check covers both forms.
  const redacted = redactText(decoded);
  return redacted === decoded ? raw : redacted;
}

/**
 * Decodes the ASCII escapes (`%00`–`%7F`) and leaves every other sequence as it is: keys
 * are ASCII, and unlike `decodeURIComponent` this never gives up on a whole string
 * because one escape elsewhere in it is malformed.
 */
function decodeAscii(text: string): string {
  return text.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
