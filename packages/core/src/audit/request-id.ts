/**
 * Request ids a server echoes (`X-Request-Id`), logs and stores in the audit log. A
 * client's id is taken only in a safe form, and replaced otherwise, before any of that:
 * 1-64 of `A-Z a-z 0-9 . _ : -`, with no 8 letters and digits in a row except inside a
 * UUID. That is the rule every echo of client text follows (a key's secret is letters and
 * digits only, so text with no 8 of them together holds no 8 characters of a key, however
 * it was cut, split or recased), and it is stricter than the key-shape rule the log
 * redaction uses: a run of 37 that rule looks for cannot be there. A UUID's 32 hex digits
 * are the exception a generator needs; a key's secret is all hex digits with a chance
 * below 1 in 10^14.
 * @module
 */

const FORM = /^[A-Za-z0-9._:-]{1,64}$/;
const UUID = /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/g;
const LONG_RUN = /[0-9A-Za-z]{8}/;

/**
 * Whether `value` may be echoed, logged and stored as a request id (an audit entry's
 * `requestId`): 1-64 of `A-Z a-z 0-9 . _ : -`, and no 8 letters and digits in a row
 * outside a UUID (`8-4-4-4-12` hex digits). `req_<uuid>`, `web-4711` and a UUID pass;
 * a ULID, a 32-hex trace id and anything holding a key's text do not.
 *
 * @example
 * ```ts
 * isWellFormedRequestId('req_3f2b8c1e-5d6a-4e7f-9a0b-1c2d3e4f5a6b'); // → true
 * isWellFormedRequestId('01HZX3K9W8Q7R6T5Y4U3I2O1P0'); // → false (26 in a row)
 * ```
 */
export function isWellFormedRequestId(value: unknown): value is string {
  return typeof value === 'string' && FORM.test(value) && !LONG_RUN.test(value.replace(UUID, '-'));
}

/**
 * The request id to echo, log and store for a request whose `X-Request-Id` header is
 * `header`: the header when `isWellFormedRequestId` accepts it, else a new
 * `req_<uuid>` (absent, malformed, too long, or holding key text alike).
 *
 * @example
 * ```ts
 * requestIdFrom('web-4711'); // → 'web-4711'
 * requestIdFrom(undefined); // → 'req_…' (a new UUID)
 * ```
 */
export function requestIdFrom(header: string | null | undefined): string {
  return isWellFormedRequestId(header) ? header : `req_${crypto.randomUUID()}`;
}
