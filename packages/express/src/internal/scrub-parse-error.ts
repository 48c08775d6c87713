/**
 * body-parser's malformed-JSON error carries the request body twice: whole, in `body`, and
 * in part, in the message (V8 quotes ~10 characters either side of the fault). A body may
 * hold a credential, and this error goes to `onError` and into the problem's `cause`,
 * which are for logs: hand them a copy without the body text.
 * @module
 */

/** V8's excerpt of the source: `"…"`, possibly with `...` on either side. */
const EXCERPT = /(?:\.\.\.)?"[\s\S]*"(?:\.\.\.)?/;

/**
 * `error` unchanged, unless it is body-parser's `entity.parse.failed`: then a
 * `SyntaxError` with the same `type`, `status`, `statusCode`, `expose` and stack frames,
 * and a message without the quoted excerpt.
 */
export function scrubParseError(error: unknown): unknown {
  if (typeof error !== 'object' || error === null || (error as { type?: unknown }).type !== 'entity.parse.failed') return error;
  const source = error as { message?: unknown; stack?: unknown } & Record<string, unknown>;
  const message = String(source.message ?? '').replace(EXCERPT, '…');
  const copy = new SyntaxError(message) as SyntaxError & Record<string, unknown>;
  const frames = String(source.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  copy.stack = [`SyntaxError: ${message}`, ...frames].join('\n');
  for (const name of ['type', 'status', 'statusCode', 'expose']) {
    if (name in source) copy[name] = source[name];
  }
  return copy;
}
