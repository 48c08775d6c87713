/**
 * A `SyntaxError` from `request.json()` quotes the request body (V8 shows ~10 characters
 * either side of the fault). A body may hold a credential, and this error goes to
 * `onError` and into the problem's `cause`, which are for logs: hand them a copy without
 * the excerpt.
 * @module
 */

/** V8's excerpt of the source: `"…"`, possibly with `...` on either side. */
const EXCERPT = /(?:\.\.\.)?"[\s\S]*"(?:\.\.\.)?/;

/** A `SyntaxError` like `error`, with the same stack frames and no quoted excerpt in its message. */
export function scrubSyntaxError(error: SyntaxError): SyntaxError {
  const message = error.message.replace(EXCERPT, '…');
  if (message === error.message) return error;
  const copy = new SyntaxError(message);
  const frames = String(error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  copy.stack = [`SyntaxError: ${message}`, ...frames].join('\n');
  return copy;
}
