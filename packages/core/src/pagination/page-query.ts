/**
 * What a list request asks for, read from its query string:
 *
 * - the raw query string as adapters hand it to the core: sliced from the request URL
 *   (`queryStringOf`), and read into the `URLSearchParams` that `Paginator.plan()` and
 *   filters take (`parseQueryString`);
 * - strict parsing of `limit`, `offset` and `cursor` (`parsePageQuery`). Anything that is
 *   not exactly a canonical decimal integer is refused: `0`, `-1`, `1.0`, `1e3`, ` 5`,
 *   `05` for a limit, repeated or empty parameters. A lenient parser that reads junk as
 *   "default" or "unlimited" hides client bugs and can unpaginate an endpoint;
 * - the page-size policy (`createLimitPolicy`): every list endpoint has a default and a
 *   hard maximum, so no client can ask for an unpaginated collection; and optionally a
 *   largest offset, so no client can make the database skip more rows than the
 *   deployment allows.
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { LimitPolicy, PaginationMode } from './types.ts';

/**
 * The query of a URL or request target (after the first `?`, before `#`), or `''`: what
 * `URL#search` holds, without the `?`, and without parsing the URL.
 *
 * @example
 * ```ts
 * queryStringOf('https://api.example.com/orders?limit=20#top'); // 'limit=20'
 * ```
 */
export function queryStringOf(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return '';
  const hash = url.indexOf('#', q);
  return hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash);
}

/**
 * `new URLSearchParams(raw)`: the same names and values, in the same order, repeated
 * parameters kept. The constructor walks the text one character at a time in JavaScript
 * (about 9,000 instructions for a query with a cursor, once the costliest step of
 * `paginate()`); when nothing in the text needs decoding (no `%`, no `+`), splitting it
 * at `&` and `=` with `indexOf` gives the same list. Anything else goes to the constructor.
 *
 * @example
 * ```ts
 * const plan = await paginator.plan(parseQueryString(queryStringOf(request.url)));
 * ```
 */
export function parseQueryString(raw: string): URLSearchParams {
  if (raw.includes('%') || raw.includes('+')) return new URLSearchParams(raw);
  const query = new URLSearchParams();
  const end = raw.length;
  // The constructor skips one leading `?`, and empty pairs (`&&`, a trailing `&`).
  let start = raw.charCodeAt(0) === 0x3f ? 1 : 0;
  while (start < end) {
    let amp = raw.indexOf('&', start);
    if (amp === -1) amp = end;
    if (amp > start) {
      const eq = raw.indexOf('=', start);
      if (eq === -1 || eq > amp) query.append(raw.slice(start, amp), '');
      else query.append(raw.slice(start, eq), raw.slice(eq + 1, amp));
    }
    start = amp + 1;
  }
  return query;
}

const LIMIT = /^[1-9][0-9]*$/;
const OFFSET = /^(0|[1-9][0-9]*)$/;

/** Options of {@link parsePageQuery}. */
export interface ParsePageQueryOptions {
  /**
   * Mode when the query has neither `cursor` nor `offset`.
   * @default 'cursor'
   */
  defaultMode?: PaginationMode;
  /**
   * Modes the endpoint serves; a parameter of another mode is refused with `invalid_request`.
   * @default ['cursor', 'offset']
   */
  modes?: readonly PaginationMode[];
}

/** The pagination parameters of one request, syntax-checked but not yet resolved. */
export type PageQuery =
  | { readonly mode: 'cursor'; readonly limit: number | undefined; readonly cursor: string | null }
  | { readonly mode: 'offset'; readonly limit: number | undefined; readonly offset: number };

/** The one value of parameter `name`: `undefined` when absent; a 400 when repeated or empty. */
function single(query: URLSearchParams, name: string, code: 'invalid_limit' | 'invalid_offset' | 'invalid_cursor'): string | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) {
    throw new KeysetError(code, { detail: `\`${name}\` must appear at most once, got ${values.length} values`, extensions: { parameter: name } });
  }
  const value = values[0] as string;
  if (value === '') throw new KeysetError(code, { detail: `\`${name}\` must not be empty`, extensions: { parameter: name } });
  return value;
}

function integer(value: string, name: string, pattern: RegExp, code: 'invalid_limit' | 'invalid_offset', rule: string): number {
  // Length first: a 16+ digit value is past Number.MAX_SAFE_INTEGER or close; the regex never sees megabytes.
  const n = value.length <= 16 && pattern.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    // The pattern admits digits only: a value it matches that is no safe integer is too big.
    const tooBig = pattern.test(value);
    throw new KeysetError(code, {
      detail: tooBig
        ? `\`${name}\` must be at most ${Number.MAX_SAFE_INTEGER}`
        : `\`${name}\` must be ${rule} written in plain decimal digits (no sign, decimal point, exponent, spaces or leading zeros)`,
      extensions: { parameter: name },
    });
  }
  return n;
}

/** Validates {@link ParsePageQueryOptions}; shared with `createPaginator`. */
export function resolveModes(options: ParsePageQueryOptions): { defaultMode: PaginationMode; modes: readonly PaginationMode[] } {
  const { defaultMode = 'cursor', modes = ['cursor', 'offset'] } = options;
  if (!Array.isArray(modes) || modes.length === 0 || modes.some((m) => m !== 'cursor' && m !== 'offset')) {
    throw new ConfigError("modes must be a non-empty array of 'cursor' and/or 'offset'");
  }
  if (!modes.includes(defaultMode)) {
    throw new ConfigError(`defaultMode ${JSON.stringify(defaultMode)} must be one of the allowed modes (${modes.join(', ')})`);
  }
  return { defaultMode, modes: Object.freeze([...new Set(modes)]) };
}

/**
 * Reads `limit`, `offset` and `cursor` from a query string. Throws `KeysetError`
 * (400): `invalid_limit`, `invalid_offset`, `invalid_cursor` (repeated or empty),
 * `conflicting_pagination` (both `cursor` and `offset`), `invalid_request` (a mode
 * the endpoint does not serve; `parameter` names it). The limit is checked for
 * syntax only; the limit policy decides about its size.
 *
 * @example
 * ```ts
 * const q = parsePageQuery(new URL(req.url).searchParams, { modes: ['cursor'] });
 * // → { mode: 'cursor', limit: 50, cursor: null } for ?limit=50
 * ```
 */
export function parsePageQuery(query: URLSearchParams, options: ParsePageQueryOptions = {}): PageQuery {
  return Object.freeze(parseWithModes(query, resolveModes(options)));
}

/**
 * {@link parsePageQuery} with modes already validated by `resolveModes` (the paginator's
 * hot path), not frozen: the paginator reads it and lets it go.
 */
export function parseWithModes(
  query: URLSearchParams,
  { defaultMode, modes }: { defaultMode: PaginationMode; modes: readonly PaginationMode[] },
): PageQuery {
  const rawLimit = single(query, 'limit', 'invalid_limit');
  const limit = rawLimit === undefined ? undefined : integer(rawLimit, 'limit', LIMIT, 'invalid_limit', 'a positive integer');
  const rawOffset = single(query, 'offset', 'invalid_offset');
  const offset = rawOffset === undefined ? undefined : integer(rawOffset, 'offset', OFFSET, 'invalid_offset', 'a non-negative integer');
  const cursor = single(query, 'cursor', 'invalid_cursor');
  if (cursor !== undefined && offset !== undefined) {
    throw new KeysetError('conflicting_pagination', {
      detail: 'Send either `cursor` or `offset`, not both',
      extensions: { parameters: ['cursor', 'offset'] },
    });
  }
  const mode: PaginationMode = cursor !== undefined ? 'cursor' : offset !== undefined ? 'offset' : defaultMode;
  if (!modes.includes(mode)) {
    // Each mode is named after its parameter.
    throw new KeysetError('invalid_request', {
      detail: `\`${mode}\` is not supported by this endpoint; it paginates with \`${modes[0]}\``,
      extensions: { parameter: mode },
    });
  }
  return mode === 'cursor' ? { mode, limit, cursor: cursor ?? null } : { mode, limit, offset: offset ?? 0 };
}

/** A validated {@link LimitPolicy} that resolves a request's page size. */
export interface LimitResolver extends LimitPolicy {
  /** Page size for a syntactically valid `limit` (or none). Throws `limit_too_large` under `reject`. */
  resolve(requested: number | undefined): number;
  /** The offset for a syntactically valid `offset`. Throws `offset_too_large` past `maxOffset`. */
  resolveOffset(requested: number): number;
  /** The policy alone, frozen, without the methods: what a paginator shows as its `limits`. */
  readonly policy: LimitPolicy;
}

/** Every name a limit policy knows (the paginator's `limits` too). Internal. */
export const LIMIT_OPTIONS: KnownOptions<LimitPolicy> = { default: true, max: true, overMax: true, maxOffset: true };

/**
 * Validates a limit policy (integers, `1 ≤ default ≤ max`, `overMax` known, `maxOffset` a
 * non-negative integer when given) and fills in `{ default: 20, max: 100, overMax:
 * 'reject' }` (the default page size is `min(20, max)` when only `max` is given; no
 * `maxOffset` means any offset). Throws `ConfigError` when bad.
 *
 * @example
 * ```ts
 * const limits = createLimitPolicy({ max: 50, overMax: 'clamp', maxOffset: 10_000 });
 * limits.resolve(500); // → 50
 * limits.resolveOffset(20_000); // throws KeysetError offset_too_large (max_offset: 10000)
 * ```
 */
export function createLimitPolicy(options: Partial<LimitPolicy> = {}): LimitResolver {
  assertKnownOptions('createLimitPolicy', options, LIMIT_OPTIONS);
  const { max = 100, overMax = 'reject', maxOffset } = options;
  // `{ max: 10 }` alone means "at most 10", not a config error about the implicit 20.
  const byDefault = options.default ?? Math.min(20, max);
  checkInteger('max', max, 1, Infinity, 'a positive integer');
  checkInteger('default', byDefault, 1, max, `an integer between 1 and limits.max (${max})`);
  if (overMax !== 'reject' && overMax !== 'clamp') throw new ConfigError(`limits.overMax must be 'reject' or 'clamp', got ${String(overMax)}`);
  checkInteger('maxOffset', maxOffset ?? 0, 0, Infinity, 'a non-negative integer');
  const policy: LimitPolicy = Object.freeze({ default: byDefault, max, overMax, maxOffset });
  return Object.freeze({
    ...policy,
    policy,
    resolve(requested: number | undefined): number {
      if (requested === undefined) return byDefault;
      if (requested <= max || overMax === 'clamp') return Math.min(requested, max);
      throw tooLarge('limit', requested, max);
    },
    resolveOffset(requested: number): number {
      // Without a limit, the offset is its own: every offset passes.
      if (requested <= (maxOffset ?? requested)) return requested;
      throw tooLarge('offset', requested, maxOffset!);
    },
  });
}

/** A `ConfigError` unless `value` is a safe integer from `min` to `max`. */
function checkInteger(name: string, value: number, min: number, max: number, rule: string): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new ConfigError(`limits.${name} must be ${rule}, got ${String(value)}`);
}

/** The 400 for a `limit` or `offset` over its maximum, with the maximum as `max_limit` or `max_offset`. */
function tooLarge(name: 'limit' | 'offset', requested: number, limit: number): KeysetError {
  return new KeysetError(`${name}_too_large`, {
    detail: `\`${name}\` must be at most ${limit}, got ${requested}`,
    extensions: { [`max_${name}`]: limit },
  });
}
