/**
 * Strict parsing of `limit`, `offset` and `cursor`. Anything that is not
 * exactly a canonical decimal integer is refused: `0`, `-1`, `1.0`, `1e3`, ` 5`, `05`
 * for a limit, repeated or empty parameters. A lenient parser that reads junk as
 * "default" or "unlimited" hides client bugs and can unpaginate an endpoint.
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import type { PaginationMode } from './types.ts';

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
