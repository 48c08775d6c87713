/**
 * Finds key-shaped text anywhere in a string, whatever stands before or after it, and
 * replaces it with `…` and its last 4 characters. Used on URLs (`redactUrl`), on every
 * problem member (`toProblem`), by loggers on whole log lines, and to refuse key text in
 * stored fields (`containsKeyShapedText`).
 *
 * The shape: a key is `<prefix>_` and 38 base62 characters, and its secret part contains
 * no `_`. Keys also arrive mangled: the separator swapped
 * (`acme_live-…`, `acme.live.…`), the bare secret, the last character cut or one
 * character deleted, a `_` or `-` typed into the secret, the `_` percent-encoded. So what
 * is redacted is
 * - every run of 37 or more letters and digits (the secret, whole or one character
 *   short, with anything glued to it), and
 * - two runs, each shorter, joined by one other character, whose lengths add up to 37
 *   or more (a secret with a `_` or `-` typed into it),
 * with the prefix-like text before a `_` taken along (`acme_live_…` → `…abcd`). Runs of
 * hexadecimal digits in one case (a SHA-1 or SHA-256 in hex) and runs of fewer than 10
 * distinct characters (`xxxx…`) are left alone: a key's are neither, but for a chance
 * below 1 in 10^21.
 *
 * Ids (`key_` and 22 characters), words and timestamps stay readable. What this cannot
 * recognise (a key cut to 20 characters, split three ways) is why client text is
 * echoed and logged through `redactRuns` as well, which needs no recognising.
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
/** A run (or two joined runs) this long is a secret, whole or with one character lost. */
const SECRET_RUN = BODY - 1;
/** Neither rule fires without one run of at least half of `SECRET_RUN`: a native pre-check. */
const HALF_RUN = new RegExp(`[0-9A-Za-z]{${Math.ceil(SECRET_RUN / 2)}}`);
/** Longest prefix taken along with a match (the keyring's own limit). */
const MAX_PREFIX_LENGTH = 32;

function isAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isLowercase(code: number): boolean {
  return code >= 97 && code <= 122;
}

function isPrefixChar(code: number): boolean {
  return isLowercase(code) || (code >= 48 && code <= 57) || code === 95; // a-z 0-9 _
}

/** Fewer distinct characters than this in a span: repetition, no secret (a key's 37 have about 28). */
const MIN_DISTINCT = 10;

/**
 * Whether the letters and digits of `text[start, end)` could be a secret: not hexadecimal
 * digits of one case (a SHA-1 or SHA-256 in hex; a key's 37 characters are all hex with a
 * chance of 1 in 10^21) and not fewer than 10 distinct characters (`xxxx…`, `0000…`).
 */
function couldBeSecret(text: string, start: number, end: number): boolean {
  let lower = false;
  let upper = false;
  let other = false;
  const seen = new Set<number>();
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (!isAlphanumeric(c)) continue;
    if (seen.size < MIN_DISTINCT) seen.add(c);
    if (c >= 97 && c <= 102) lower = true;
    else if (c >= 65 && c <= 70) upper = true;
    else if (c > 57) other = true;
  }
  return seen.size >= MIN_DISTINCT && (other || (lower && upper));
}

/**
 * The spans of `text` to redact, as `[start, end, start, end, …]`: runs and joined pairs
 * as the module header says, overlapping ones merged, ones that cannot be a secret dropped.
 */
function secretSpans(text: string): number[] {
  const spans: number[] = [];
  let spanStart = -1;
  let spanEnd = -1;
  let previousStart = -1;
  let previousEnd = -2;
  const mark = (start: number, end: number): void => {
    if (spanEnd >= start) {
      if (end > spanEnd) spanEnd = end;
      return;
    }
    if (spanStart >= 0 && couldBeSecret(text, spanStart, spanEnd)) spans.push(spanStart, spanEnd);
    spanStart = start;
    spanEnd = end;
  };
  for (let i = 0; i < text.length; ) {
    if (!isAlphanumeric(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && isAlphanumeric(text.charCodeAt(i))) i++;
    const length = i - start;
    const previousLength = previousEnd - previousStart;
    if (length >= SECRET_RUN) mark(start, i);
    // Only runs too short on their own: a whole secret does not pull in the next path segment.
    else if (start - previousEnd === 1 && previousLength < SECRET_RUN && previousLength + length >= SECRET_RUN) mark(previousStart, i);
    previousStart = start;
    previousEnd = i;
  }
  if (spanStart >= 0 && couldBeSecret(text, spanStart, spanEnd)) spans.push(spanStart, spanEnd);
  return spans;
}

/**
 * `text` with everything shaped like an API key, whole or mangled, replaced by `…` and
 * its last 4 characters. Text without one is returned unchanged (the same string).
 *
 * @example
 * ```ts
 * redactText('GET /api/orders/xacme_live_0123456789abcdefghijABCDEFGHIJKLMN1a2B!'); // 'GET /api/orders/…1a2B!'
 * redactText('acme.live.0123456789abcdefghijABCDEFGHIJKLMN1a2'); // 'acme.live.…N1a2' (one character cut)
 * ```
 */
export function redactText(text: string): string {
  if (typeof text !== 'string' || text.length < SECRET_RUN || !HALF_RUN.test(text)) return text;
  const spans = secretSpans(text);
  if (spans.length === 0) return text;
  let out = '';
  let done = 0;
  for (let s = 0; s < spans.length; s += 2) {
    let start = spans[s] as number;
    const end = spans[s + 1] as number;
    // Take the prefix along (`acme_live`): it is not secret, but a key is only ever shown
    // as its last 4 characters. Bounded, and never into text already written out.
    if (start > done && text.charCodeAt(start - 1) === 95 /* _ */) {
      const underscore = start - 1;
      const floor = Math.max(done, underscore - MAX_PREFIX_LENGTH);
      let back = underscore;
      while (back > floor && isPrefixChar(text.charCodeAt(back - 1))) back--;
      while (back < underscore && !isLowercase(text.charCodeAt(back))) back++;
      if (back < underscore) start = back;
    }
    out += text.slice(done, start) + redactKey(text.slice(start, end));
    done = end;
  }
  return out + text.slice(done);
}

/** Rounds of percent-decoding looked through; text still encoded after them is suspect. */
const MAX_DECODE_ROUNDS = 16;

/**
 * `text` with its ASCII percent-escapes decoded until none is left, or `undefined` when
 * some are still left after 16 rounds (text encoded that often is nothing to show).
 * Internal: shared with `redactRuns` and `containsKeyShapedText`.
 */
export function decodeAsciiFully(text: string): string | undefined {
  let decoded = text;
  for (let round = 0; decoded.indexOf('%') >= 0; round++) {
    const next = decodeAscii(decoded);
    if (next === decoded) return decoded;
    if (round === MAX_DECODE_ROUNDS) return undefined;
    decoded = next;
  }
  return decoded;
}

/**
 * `raw` (a path, a query name or value, as sent) with key-shaped text redacted, looking
 * through percent-encoding too: `acme_live_%41…`, or `%2541…` encoded twice, is still a
 * key. Text that decodes to something holding a key is returned decoded and redacted;
 * anything else is returned byte for byte. Never throws.
 */
export function redactEncodedText(raw: string): string {
  if (raw.indexOf('%') < 0) return redactText(raw);
  const decoded = decodeAsciiFully(raw);
  // Encoded past any reason: redact the whole of what is left of it.
  if (decoded === undefined) return redactKey(raw);
  // Decoding never breaks up a key written out plainly, so one check covers both forms.
  const redacted = redactText(decoded);
  return redacted === decoded ? raw : redacted;
}

/**
 * Whether `text` holds anything `redactText` would redact, plain or percent-encoded (a
 * whole key of any prefix, or a mangled one). Stored fields that are shown or sent
 * later (a key's name, its metadata, a rate-limit policy name) refuse such text, and so
 * does a `Host` header before it becomes a `Link` origin.
 *
 * @example
 * ```ts
 * containsKeyShapedText('nightly export'); // false
 * containsKeyShapedText('acme-live-0123456789abcdefghijABCDEFGHIJKLMN1a2B'); // true
 * ```
 */
export function containsKeyShapedText(text: string): boolean {
  if (typeof text !== 'string') return false;
  const decoded = decodeAsciiFully(text);
  return decoded === undefined || redactText(decoded) !== decoded;
}

/**
 * Decodes the ASCII escapes (`%00`–`%7F`) and leaves every other sequence as it is: keys
 * are ASCII, and unlike `decodeURIComponent` this never gives up on a whole string
 * because one escape elsewhere in it is malformed.
 */
function decodeAscii(text: string): string {
  return text.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
