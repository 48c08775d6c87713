/**
 * A JSON parser's `SyntaxError` quotes the text it failed on (V8 shows ~10 characters
 * either side of the fault), and body-parser's also carries the whole body in `body`. A
 * body may hold a credential, and such an error goes to `onError` and into a problem's
 * `cause`, which are for logs: every adapter hands them a copy without the text.
 * @module
 */

/** V8's excerpt of the source: `"…"`, possibly with `...` on either side. */
const EXCERPT = /(?:\.\.\.)?"[\s\S]*"(?:\.\.\.)?/;

/** What an `http-errors`-style error (body-parser's) carries besides its message, kept on the copy. */
const KEPT = ['type', 'status', 'statusCode', 'expose'] as const;

/**
 * `error` without the client's text: a `SyntaxError` with the same stack frames, the
 * message's quoted excerpt replaced by `…`, and the `type`, `status`, `statusCode` and
 * `expose` it had (never `body`). `error` itself when its message quotes nothing.
 *
 * @example
 * ```ts
 * scrubSyntaxError(new SyntaxError('Unexpected token in JSON at position 9: "{\\"key\\": \\"acme_…"')).message;
 * // 'Unexpected token in JSON at position 9: …'
 * ```
 */
export function scrubSyntaxError<E extends Error>(error: E): E | SyntaxError {
  const message = error.message.replace(EXCERPT, '…');
  if (message === error.message && !('body' in error)) return error;
  const copy = new SyntaxError(message) as SyntaxError & Record<string, unknown>;
  const frames = String(error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  copy.stack = [`SyntaxError: ${message}`, ...frames].join('\n');
  for (const name of KEPT) if (name in error) copy[name] = (error as unknown as Record<string, unknown>)[name];
  return copy;
}
