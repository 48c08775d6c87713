/**
 * The request URL as an access log writes it: safe by construction, whatever a client
 * put in it (a mangled key in a query value was logged as sent).
 * @module
 */
import { redactUrl } from '../auth/query-credentials.ts';
import { redactRuns } from './redact-runs.ts';

/** A path segment, query name or value, or fragment: the text between URL delimiters. */
const PIECE = /[^/?#&;=]+/g;

/**
 * `url` for a log line: `redactUrl` first (credential-named parameters and whole keys
 * become `…abcd`), then every path segment, query name and value and the fragment through
 * `redactRuns`, each on its own, so no log line holds 8 letters and digits of the URL in
 * a row. Ids and cursors are shown as their first 3 and last 4 characters
 * (`/api/keys/key_7Hq…eWcN`), short values as sent (`?limit=20&status=paid`).
 *
 * @example
 * ```ts
 * redactUrlForLog('/api/orders?status=paid&cursor=eyJ2IjoxfQ'); // '/api/orders?status=paid&cursor=eyJ…oxfQ'
 * ```
 */
export function redactUrlForLog(url: string | URL): string {
  return redactUrl(url).replace(PIECE, (piece) => redactRuns(piece));
}
