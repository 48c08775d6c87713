/**
 * Where a leaked key was found, as its record keeps it (`KeyRecord.leakUrl`). The text
 * comes from a secret-scanning alert: GitHub signs the alert, but the URL names a commit,
 * file or issue that whoever leaked the key chose, so it is treated as client text. It is
 * shown by the admin API and the CLI, so it must hold no key text: an alert's URL can
 * hold the very key it reports (a file named after it, a gist's query string).
 * @module
 */
import { redactRuns } from '../redaction/redact-runs.ts';
import { containsKeyShapedText, decodeAsciiFully, redactEncodedText } from '../redaction/redact-text.ts';

/** Longest `leakUrl` kept; a longer one is not recorded (the leak is). */
export const MAX_LEAK_URL_LENGTH = 2048;

/** Letters and digits a secret part shares with a text before that text is cut up (`redactRuns`). */
const RUN = 8;

/**
 * The characters a kept `leakUrl` may hold: RFC 3986's unreserved and reserved characters
 * and `%`, less the quote (`'`), and the `…` redaction leaves. Nothing that is markup,
 * space, a control or a bidirectional override, so the text is safe to show as it is.
 */
const URL_TEXT = /^https?:\/\/[A-Za-z0-9\-._~:/?#[\]@!$&()*+,;=%\u2026]+$/;
const NOT_URL_TEXT = /[^A-Za-z0-9\-._~:/?#[\]@!$&()*+,;=%\u2026]/gu;

/**
 * Whether `url` may be stored as a key's `leakUrl`: starts with `http://` or `https://`,
 * at most 2048 characters, only URL characters (no space, quote, markup, control or
 * bidirectional character: percent-encode them), nothing `redactText` would redact. Only
 * whole keys are recognised here: a key cut short needs the key itself (`leakUrlOf`).
 */
export function isRecordableLeakUrl(url: unknown): url is string {
  return typeof url === 'string' && url.length <= MAX_LEAK_URL_LENGTH && URL_TEXT.test(url) && !containsKeyShapedText(url);
}

/** `text` with every character outside `URL_TEXT` percent-encoded; `null` for text no URL holds (a lone surrogate). */
function encodeOthers(text: string): string | null {
  try {
    return text.replace(NOT_URL_TEXT, (c) => encodeURIComponent(c).replace(/'/g, '%27'));
  } catch {
    return null;
  }
}

/**
 * Whether `text`, as sent or percent-decoded, holds `RUN` characters in a row of `secret`,
 * in any case (the URL parser lowercases a host).
 */
function sharesRun(text: string, secret: string): boolean {
  const decoded = decodeAsciiFully(text);
  if (decoded === undefined) return true;
  const views = [text.toLowerCase(), decoded.toLowerCase()];
  const lower = secret.toLowerCase();
  for (let i = 0; i + RUN <= lower.length; i++) {
    const window = lower.slice(i, i + RUN);
    if (/[^0-9a-z]/.test(window)) continue;
    if (views.some((view) => view.includes(window))) return true;
  }
  return false;
}

/**
 * The alert's `url` as the key record keeps it, or `null`: only an absolute http(s) URL
 * of at most 2048 characters, its user name and password dropped. Whole or mangled keys in
 * it become `…abcd` (`redactEncodedText`); when it still holds 8 letters and digits in a
 * row of `token`'s secret part, in any case (its text after the last `_`: a key cut
 * short, which no shape reveals), every run of 8 or more letters and digits is cut to its first 3 and last
 * 4 (`redactRuns`), so none of the secret is left.
 *
 * @example
 * ```ts
 * leakUrlOf('https://github.com/octo/app/blob/4f2a/.env', key); // 'https://github.com/octo/app/blob/4f2a/.env'
 * leakUrlOf('javascript:alert(1)', key); // null
 * ```
 */
export function leakUrlOf(url: unknown, token: string): string | null {
  if (typeof url !== 'string' || url.length > MAX_LEAK_URL_LENGTH) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  parsed.username = '';
  parsed.password = '';
  const secret = token.slice(token.lastIndexOf('_') + 1);
  let text = redactEncodedText(parsed.href);
  // Cut up, the text is percent-decoded: characters a URL must encode are encoded again.
  if (sharesRun(text, secret)) text = redactRuns(text);
  const safe = encodeOthers(text);
  return safe !== null && !sharesRun(safe, secret) && isRecordableLeakUrl(safe) ? safe : null;
}
