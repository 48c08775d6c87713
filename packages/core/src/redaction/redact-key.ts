/**
 * Rendering of secrets for logs and messages: at most the last 4 characters.
 * @module
 */

/** Below this length even 4 characters would be too large a share of the secret. */
const MIN_LENGTH_TO_SHOW = 16;

/**
 * `…` followed by the last 4 characters of `text`; only `…` when `text` is shorter than
 * 16 characters (or not a string), so a short secret is never a quarter revealed.
 *
 * @example
 * ```ts
 * redactKey('acme_live_0123456789abcdefghijABCDEFGHIJ1a2B3c'); // '…2B3c'
 * ```
 */
export function redactKey(text: unknown): string {
  if (typeof text !== 'string' || text.length < MIN_LENGTH_TO_SHOW) return '…';
  return `…${last4(text)}`;
}

/** The last 4 characters when `redactKey` would show them, else `undefined`. */
export function safeLast4(text: string): string | undefined {
  return text.length < MIN_LENGTH_TO_SHOW ? undefined : last4(text);
}

/**
 * The last 4 UTF-16 units, or 3 when the 4th from the end is the second half of a
 * surrogate pair: a lone half is not text (`encodeURIComponent` throws on it, JSON
 * loggers escape it), and showing less is always safe. Keys are ASCII: always 4.
 */
function last4(text: string): string {
  const start = text.length - 4;
  const code = text.charCodeAt(start);
  return text.slice(code >= 0xdc00 && code <= 0xdfff ? start + 1 : start);
}
