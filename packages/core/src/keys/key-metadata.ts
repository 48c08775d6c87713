/**
 * Key metadata: a JSON object the operator attaches to a key (customer id, plan, owner
 * team) and gets back on every verification, so a handler needs no second lookup. It is
 * plain data with documented bounds, checked when a key is issued or updated, so a store
 * never holds something it cannot give back unchanged.
 * @module
 */
import { KeysetError } from '../errors.ts';
import { containsKeyShapedText } from '../redaction/redact-text.ts';

/** A JSON value as metadata holds it. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A key's metadata: a JSON object (`{}` when none was given). */
export type KeyMetadata = { readonly [key: string]: JsonValue };

/** Bytes of UTF-8 JSON (`JSON.stringify`) a key's metadata may take. */
export const MAX_METADATA_BYTES = 4096;
/** Nesting depth: the metadata object itself is depth 1. */
export const MAX_METADATA_DEPTH = 5;
/** Members of one object (or items of one array). */
export const MAX_METADATA_ENTRIES = 100;

const EMPTY: KeyMetadata = Object.freeze({});
/** Text PostgreSQL's JSON functions refuse, and that no two stores would give back alike. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function invalid(detail: string): KeysetError {
  return new KeysetError('invalid_request', { detail: `\`metadata\` ${detail}`, extensions: { field: 'metadata' } });
}

/** Key-shaped text at `path`: refused like key-input.ts's `keyTextRefusal`. */
function keyText(path: string): KeysetError {
  return invalid(`must not hold an API key or anything shaped like one (a long run of letters and digits) (at ${path}).`);
}

function check(value: unknown, depth: number, path: string): void {
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) throw invalid(`must not contain U+0000 or unpaired surrogates (at ${path}).`);
    // Returned on every verification and by the admin API: never a place for key text.
    if (containsKeyShapedText(value)) throw keyText(path);
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(`numbers must be finite (at ${path}).`);
    return;
  }
  if (typeof value !== 'object') throw invalid(`must hold JSON values only (at ${path}: ${typeof value}).`);
  if (depth > MAX_METADATA_DEPTH) throw invalid(`nests deeper than ${MAX_METADATA_DEPTH} levels (at ${path}).`);
  if (Array.isArray(value)) {
    if (value.length > MAX_METADATA_ENTRIES) throw invalid(`arrays hold at most ${MAX_METADATA_ENTRIES} items (at ${path}).`);
    value.forEach((item, i) => check(item, depth + 1, `${path}[${i}]`));
    return;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) throw invalid(`must hold plain objects only (at ${path}).`);
  const keys = Object.keys(value);
  if (keys.length > MAX_METADATA_ENTRIES) throw invalid(`objects hold at most ${MAX_METADATA_ENTRIES} members (at ${path}).`);
  // Members are named by position (`metadata.#2` is the second member): their names are
  // client text, which a message does not echo.
  keys.forEach((key, i) => {
    const at = `${path}.#${i + 1}`;
    if (UNSTORABLE.test(key)) throw invalid(`member names must not contain U+0000 or unpaired surrogates (at ${at}).`);
    if (containsKeyShapedText(key)) throw keyText(at);
    check((value as Record<string, unknown>)[key], depth + 1, at);
  });
}

/** A deep copy of `value` (already checked), frozen: a cached verified key is shared by requests. */
export function freezeMetadata(value: unknown): KeyMetadata {
  const copy = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) return Object.freeze(v.map(copy));
    const out: Record<string, unknown> = {};
    // defineProperty: a member named `__proto__` stays a member, it never sets a prototype.
    for (const [k, item] of Object.entries(v)) Object.defineProperty(out, k, { value: copy(item), enumerable: true, writable: false, configurable: false });
    return Object.freeze(out);
  };
  if (typeof value !== 'object' || value === null || Object.keys(value).length === 0) return EMPTY;
  return copy(value) as KeyMetadata;
}

/**
 * `metadata` as given to `issue`/`update`, checked: a plain JSON object, at most
 * {@link MAX_METADATA_BYTES} bytes of UTF-8 JSON, {@link MAX_METADATA_DEPTH} levels and
 * {@link MAX_METADATA_ENTRIES} members per object. Throws 400 `invalid_request` (field
 * `metadata`). `null`/`undefined` is `{}`.
 */
export function validateMetadata(value: unknown): KeyMetadata {
  if (value === undefined || value === null) return EMPTY;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('must be a JSON object.');
  check(value, 1, '$');
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > MAX_METADATA_BYTES) throw invalid(`takes ${bytes} bytes as JSON; at most ${MAX_METADATA_BYTES} are allowed.`);
  return freezeMetadata(value);
}
