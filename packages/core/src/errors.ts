/**
 * keyset's one error module. Every failure a client can cause is a `KeysetError`
 * with a stable `code`; `toProblem()` turns it into an RFC 9457 problem.
 * Messages never contain key text: callers pass keys through `redactKey()` first, and
 * `toProblem()` redacts every member it sends anyway (members often hold client input).
 * @module
 */
import { redactRuns } from './redaction/redact-runs.ts';
import { redactEncodedText, redactText } from './redaction/redact-text.ts';

/** Stable problem codes: clients may branch on them, so none is renamed once published. */
export type ErrorCode =
  | 'invalid_limit'
  | 'limit_too_large'
  | 'invalid_offset'
  | 'offset_too_large'
  | 'invalid_cursor'
  | 'conflicting_pagination'
  | 'invalid_sort'
  | 'api_key_in_query'
  | 'invalid_request'
  | 'missing_api_key'
  | 'unsupported_auth_scheme'
  | 'invalid_api_key'
  | 'insufficient_scope'
  | 'ip_not_allowed'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'quota_exhausted'
  | 'concurrency_limited'
  | 'usage_reads_busy'
  | 'unavailable';

/** One entry of the error catalogue: a code's HTTP status and problem `title`. */
export interface ErrorCatalogueEntry {
  readonly status: number;
  readonly title: string;
}

const entry = (status: number, title: string): ErrorCatalogueEntry => Object.freeze({ status, title });

/**
 * Every problem `code` keyset can answer with, its status and its title: the one list that
 * docs, OpenAPI descriptions and tests derive from, so none of them drifts from the code.
 *
 * @example
 * ```ts
 * const codes = Object.keys(ERROR_CATALOGUE); // ['invalid_limit', 'limit_too_large', …]
 * ERROR_CATALOGUE.rate_limited; // { status: 429, title: 'Too many requests' }
 * ```
 */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, ErrorCatalogueEntry>> = Object.freeze({
  invalid_limit: entry(400, 'Invalid limit'),
  limit_too_large: entry(400, 'Limit too large'),
  invalid_offset: entry(400, 'Invalid offset'),
  offset_too_large: entry(400, 'Offset too large'),
  invalid_cursor: entry(400, 'Invalid cursor'),
  conflicting_pagination: entry(400, 'Conflicting pagination parameters'),
  invalid_sort: entry(400, 'Invalid sort'),
  api_key_in_query: entry(400, 'API key in query string'),
  invalid_request: entry(400, 'Invalid request'),
  missing_api_key: entry(401, 'Missing API key'),
  unsupported_auth_scheme: entry(401, 'Unsupported authentication scheme'),
  invalid_api_key: entry(401, 'Invalid API key'),
  insufficient_scope: entry(403, 'Insufficient scope'),
  ip_not_allowed: entry(403, 'IP address not allowed'),
  not_found: entry(404, 'Not found'),
  method_not_allowed: entry(405, 'Method not allowed'),
  rate_limited: entry(429, 'Too many requests'),
  quota_exhausted: entry(429, 'Quota exhausted'),
  concurrency_limited: entry(429, 'Too many requests in progress'),
  usage_reads_busy: entry(429, 'Too many usage reads in progress'),
  unavailable: entry(503, 'Service unavailable'),
});

/** Why a key was refused. Goes to logs and metrics only, never to the client. */
export type InvalidKeyReason = 'malformed' | 'checksum' | 'unknown' | 'expired' | 'revoked';

/**
 * Why a request's credentials were refused, for logs and metrics: no credentials
 * (`missing`), credentials in a form keyset does not read (`scheme`: `Authorization: Bearer`,
 * an `X-API-Key` header), or a key that did not verify (`InvalidKeyReason`).
 */
export type AuthenticationReason = InvalidKeyReason | 'missing' | 'scheme';

const BRAND = Symbol.for('keyset.error');

/** Options every `KeysetError` accepts. */
export interface KeysetErrorOptions {
  /** Human-readable explanation for this occurrence (RFC 9457 `detail`). Never key text. */
  detail?: string;
  /**
   * The underlying failure, kept for logs; never serialised to the client. Key-shaped text
   * in its `message` and `stack` (and those of its own causes) is redacted in place: a
   * framework's error often quotes the path or header as sent, and a cause reaches logs.
   */
  cause?: unknown;
  /** Extra problem members (RFC 9457 §3.2), e.g. `max_limit`, `missing_scopes`. */
  extensions?: Record<string, unknown>;
  /** Response headers the problem needs (`WWW-Authenticate`, `Retry-After`, `RateLimit`). */
  headers?: Record<string, string>;
}

/**
 * Base class of every error a client can cause.
 *
 * @example
 * ```ts
 * throw new KeysetError('invalid_limit', { detail: '`limit` must be a positive integer' });
 * ```
 */
export class KeysetError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string;
  readonly extensions: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, options: KeysetErrorOptions = {}) {
    const { status, title } = ERROR_CATALOGUE[code];
    const { detail = title, cause, extensions = {}, headers = {} } = options;
    // A client's mistake needs no stack trace, and capturing one is most of what a
    // refusal costs: under a flood of bad keys that is the server's CPU. The
    // underlying failure, when there is one, keeps its own stack in `cause`.
    const limits = Error as { stackTraceLimit?: number | undefined };
    const stackTraceLimit = limits.stackTraceLimit;
    limits.stackTraceLimit = 0;
    try {
      super(detail, cause === undefined ? undefined : { cause });
    } finally {
      limits.stackTraceLimit = stackTraceLimit;
    }
    if (cause !== undefined) redactCause(cause, 0);
    this.name = new.target.name;
    // Brand shared by every installed copy of @keyset/core, see `isKeysetError`.
    Object.defineProperty(this, BRAND, { value: true });
    this.code = code;
    this.status = status;
    this.detail = detail;
    this.extensions = Object.freeze({ ...extensions });
    this.headers = Object.freeze({ ...headers });
  }
}

/** Longest chain of `cause`s followed when redacting (a cycle ends there too). */
const MAX_CAUSE_DEPTH = 4;

/**
 * Redacts key-shaped text, plain or percent-encoded, in an error's `message` and `stack`
 * and down its `cause` chain, in place (the same objects stay in `cause`, so callers can
 * still compare them). Only errors: anything else is left as it is. Never throws.
 */
function redactCause(value: unknown, depth: number): void {
  if (depth > MAX_CAUSE_DEPTH || typeof value !== 'object' || value === null) return;
  const error = value as { message?: unknown; stack?: unknown; cause?: unknown };
  if (typeof error.message !== 'string') return;
  try {
    const message = redactEncodedText(error.message);
    if (message !== error.message) error.message = message;
    const stack = error.stack;
    if (typeof stack === 'string') {
      const redacted = redactEncodedText(stack);
      if (redacted !== stack) error.stack = redacted;
    }
  } catch {
    // A frozen or exotic error: it stays as it is rather than failing the request.
  }
  redactCause(error.cause, depth + 1);
}

/**
 * The request's credentials were missing or refused (401), always with a
 * `WWW-Authenticate` challenge (RFC 9110 §11.6.1) per accepted scheme: `ApiKey realm="…"`
 * by default, `Bearer realm="…"` and `X-API-Key realm="…"` when the keyring accepts them
 * (`schemes`; the header has no scheme of its own, so its challenge names the header). `reason` says why,
 * for logs and metrics; for a key that did not verify the client only ever sees
 * `invalid_api_key`.
 *
 * @example
 * ```ts
 * throw new AuthenticationError('invalid_api_key', { reason: 'revoked', realm: 'api', last4: 'a1B2' });
 * ```
 */
export class AuthenticationError extends KeysetError {
  readonly reason: AuthenticationReason;
  /** Last 4 characters of the refused key, when it had that many. Safe to log. */
  readonly last4: string | undefined;

  constructor(
    code: 'missing_api_key' | 'unsupported_auth_scheme' | 'invalid_api_key',
    options: { reason?: InvalidKeyReason; realm?: string; schemes?: readonly string[]; last4?: string; cause?: unknown; detail?: string } = {},
  ) {
    const { reason, realm = 'api', schemes = DEFAULT_SCHEMES, last4, cause, detail } = options;
    const quotedRealm = realm.replace(/["\\]/g, '');
    super(code, {
      detail: detail ?? AUTHENTICATION_DETAILS[code],
      cause,
      headers: { 'www-authenticate': schemes.map((scheme) => `${scheme} realm="${quotedRealm}"`).join(', ') },
    });
    this.reason = code === 'missing_api_key' ? 'missing' : code === 'unsupported_auth_scheme' ? 'scheme' : (reason ?? 'unknown');
    this.last4 = last4;
  }
}

const DEFAULT_SCHEMES: readonly string[] = Object.freeze(['ApiKey']);

const AUTHENTICATION_DETAILS = Object.freeze({
  missing_api_key: 'Send the key in the Authorization header: `Authorization: ApiKey <key>`.',
  unsupported_auth_scheme: 'This API reads a key only from the Authorization header as `Authorization: ApiKey <key>`.',
  invalid_api_key: 'The API key is not valid.',
});

/** Whether `value` is a keyset error, also across two installed copies of the package. */
export function isKeysetError(value: unknown): value is KeysetError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * A programming or configuration mistake, thrown when a factory runs, or by
 * `Paginator.page` on the first page whose rows carry a sort value the driver may have
 * rounded. Never mapped to a client response (a 500 through the adapters): it should
 * stop the server from starting, or the first request in development.
 *
 * @example
 * ```ts
 * throw new ConfigError('limits.max must be a positive integer, got 0');
 * ```
 */
export class ConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/** RFC 9457 problem details object, with keyset's `code` member. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode | 'internal_error';
  instance?: string;
  [extension: string]: unknown;
}

/** A ready-to-send problem response. */
export interface ProblemResponse {
  status: number;
  headers: Record<string, string>;
  body: ProblemDetails;
}

/** Options of `toProblem`. */
export interface ToProblemOptions {
  /**
   * Prefix of the problem `type` URI; the code is appended.
   * @default 'urn:keyset:problem:'
   */
  typeBase?: string;
  /**
   * RFC 9457 `instance`: usually the request path. Never include the query string (it
   * may hold credentials); key-shaped text in the path is redacted (`…abcd`).
   */
  instance?: string;
}

/** The media type of every error body (RFC 9457 §3). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * Maps any thrown value to a problem response. Keyset errors keep their status, code and
 * extensions; anything else is a server bug and becomes a bare 500 that reveals nothing.
 * `instance` is client text: it goes through `redactRuns` (no 8 letters and digits in a
 * row: `/api/keys/key_7Hq…eWcN`) and is cut to 256 characters. Every other member
 * (`detail`, `field`, any extension string or name, at any depth) has key-shaped text,
 * whole or mangled, redacted here and is cut to 1024 characters (names to 128), so no
 * adapter can echo a key or send back a body many times what was sent. Messages that
 * quote client text quote it through `clipInput`.
 *
 * @example
 * ```ts
 * const { status, headers, body } = toProblem(err, { instance: '/api/orders' });
 * ```
 */
export function toProblem(error: unknown, options: ToProblemOptions = {}): ProblemResponse {
  const { typeBase = 'urn:keyset:problem:', instance } = options;
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE };
  if (!isKeysetError(error)) {
    const body: ProblemDetails = {
      type: `${typeBase}internal_error`,
      title: 'Internal server error',
      status: 500,
      detail: 'The server failed to handle this request.',
      code: 'internal_error',
    };
    if (instance !== undefined) body.instance = clipInstance(instance);
    return { status: 500, headers, body };
  }
  Object.assign(headers, error.headers);
  const body: ProblemDetails = {
    ...(redactMembers(error.extensions, 0) as Record<string, unknown>),
    type: `${typeBase}${error.code}`,
    title: ERROR_CATALOGUE[error.code].title,
    status: error.status,
    detail: cut(redactText(error.detail), MAX_MEMBER_LENGTH),
    code: error.code,
  };
  if (instance !== undefined) body.instance = clipInstance(instance);
  return { status: error.status, headers, body };
}

/** Longest `instance`: a path, and what a client sent. */
const MAX_INSTANCE_LENGTH = 256;
/** Longest `detail` or extension string: a message with a clipped quote or two fits. */
const MAX_MEMBER_LENGTH = 1024;
/** Longest extension member name. */
const MAX_NAME_LENGTH = 128;

/**
 * `text` cut to `max` characters, `…` last. Only text with key-shaped text already
 * redacted: a cut key no longer looks like one.
 */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // not half a surrogate pair
  return `${text.slice(0, end)}…`;
}

/** The request path as `instance`: see `toProblem`. */
function clipInstance(instance: string): string {
  return cut(redactRuns(redactEncodedText(instance)), MAX_INSTANCE_LENGTH);
}

/** Extension members with key-shaped text redacted in every string, names included, and cut. */
function redactMembers(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return cut(redactText(value), MAX_MEMBER_LENGTH);
  if (typeof value !== 'object' || value === null || depth > 8) return value;
  if (Array.isArray(value)) return value.map((item) => redactMembers(item, depth + 1));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // a Date, a URL: left as they serialise
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) out[cut(redactText(name), MAX_NAME_LENGTH)] = redactMembers(member, depth + 1);
  return out;
}
