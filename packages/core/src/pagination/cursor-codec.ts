/**
 * Signed, versioned, opaque cursors (DESIGN §2).
 *
 * Wire format: base64url, no padding, of `0x02 ‖ payload ‖ tag`, where
 * - `0x02` is the format version;
 * - `payload` is UTF-8 JSON `{"d":"f"|"b","p":[...sort values]|null,"t":issuedAtSeconds}`:
 *   the direction (forward = after the position, backward = before it), the position,
 *   values typed per the sort spec (bigint/decimal/timestamp as text, so nothing is
 *   rounded), or `null` for "from the start" (forward) / "from the end" (backward);
 * - `tag` is HMAC-SHA256 truncated to its first 16 bytes (128 bits, well above the
 *   64-bit floor of RFC 2104 §5 and NIST SP 800-107) over the version, the scope
 *   fingerprint and the payload.
 * Version 1 cursors (`0x01`, payload `{"p":[...],"t":…}`, always forward) issued by
 * earlier releases still decode, so a deploy does not break the walks in flight.
 * The tag is checked (constant time, against every configured secret) before the JSON
 * is parsed; then every value is re-checked against the sort spec. Every failure is the
 * same `invalid_cursor` 400, so a bad cursor never becomes a 500 or a silent first page.
 * @module
 */
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { decodeBase64url, encodeBase64url, utf8Decode, utf8Encode } from '../internal/base64url.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { isSortValue, positionMismatch } from '../internal/sort-values.ts';
import type { CursorDirection, CursorPosition, SortKey, SortSpec } from './types.ts';

const VERSION = 2;
/** Forward-only cursors of releases before backward pages; still accepted. */
const VERSION_1 = 1;
const TAG_BYTES = 16;
const MIN_SECRET_BYTES = 32;

/** Options of {@link createCursorCodec}. */
export interface CursorCodecOptions {
  /**
   * HMAC secrets, each at least 32 bytes (UTF-8 for strings). The first signs; any
   * verifies. Rotate by prepending a new secret, and drop the old one once the cursors
   * it signed no longer matter (after `ttlSeconds`, if set).
   */
  secrets: readonly (string | Uint8Array)[];
  /**
   * Seconds a cursor stays valid after it was issued; unset = no expiry.
   * @default undefined
   */
  ttlSeconds?: number;
  /**
   * Longest cursor accepted or produced, in characters.
   * @default 2048
   */
  maxLength?: number;
  /**
   * Cryptography provider.
   * @default the runtime's provider (`node:crypto` on Node, Web Crypto elsewhere)
   */
  crypto?: CryptoProvider;
  /**
   * Time source for issued-at and expiry.
   * @default systemClock
   */
  clock?: Clock;
}

/** What a verified cursor says: where, and which way. */
export interface DecodedCursor {
  readonly direction: CursorDirection;
  /** `null`: from the start (forward) or from the end (backward). */
  readonly position: CursorPosition | null;
}

/** Encodes and verifies cursors. */
export interface CursorCodec {
  /**
   * Signs `position` (cursor-form values, one per sort key; `null` for the start or the
   * end) and `direction` for the query `fingerprint`.
   */
  encode(position: CursorPosition | null, fingerprint: string, sort: SortSpec, direction?: CursorDirection): Promise<string>;
  /** Verifies and decodes; throws `KeysetError('invalid_cursor')` for anything else. */
  decode(text: string, fingerprint: string, sort: SortSpec): Promise<DecodedCursor>;
}

const encoder = new TextEncoder();

function secretBytes(secret: string | Uint8Array, index: number): Uint8Array {
  const bytes = typeof secret === 'string' ? encoder.encode(secret) : secret instanceof Uint8Array ? new Uint8Array(secret) : undefined;
  if (bytes === undefined) throw new ConfigError(`cursor secrets[${index}] must be a string or a Uint8Array`);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new ConfigError(
      `cursor secrets[${index}] is ${bytes.length} bytes; use at least ${MIN_SECRET_BYTES} random bytes (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return bytes;
}

function macInput(version: number, fingerprint: string, payload: string): string {
  // NUL cannot occur in a base64url fingerprint, and JSON.stringify escapes it in the payload.
  return `keyset-cursor\u0000${version}\u0000${fingerprint}\u0000${payload}`;
}

const FORWARD: DecodedCursor = Object.freeze({ direction: 'forward', position: null });
const BACKWARD: DecodedCursor = Object.freeze({ direction: 'backward', position: null });

class Rejected extends Error {}

/**
 * Creates a cursor codec. Throws `ConfigError` for no secrets, a secret shorter than
 * 32 bytes, or a bad `ttlSeconds`/`maxLength`.
 *
 * @example
 * ```ts
 * const sort = defineSortSpec([
 *   { key: 'createdAt', dir: 'desc', type: 'timestamp' },
 *   { key: 'id', dir: 'desc', type: 'int', unique: true },
 * ]);
 * const codec = createCursorCodec({ secrets: [process.env.CURSOR_SECRET!], ttlSeconds: 3600 });
 * // One cursor-form value per sort key: timestamp text, then an int as a number.
 * const text = await codec.encode(['2024-05-01 10:00:00.123456+00', 42], fingerprint, sort);
 * const { direction, position } = await codec.decode(text, fingerprint, sort); // 'forward', ['2024-05-01 10:00:00.123456+00', 42]
 * ```
 */
export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  const { secrets, ttlSeconds, maxLength = 2048, crypto = defaultCrypto, clock = systemClock } = options;
  if (!Array.isArray(secrets) || secrets.length === 0) throw new ConfigError('cursor.secrets must be a non-empty array');
  const keys = Object.freeze(secrets.map(secretBytes));
  const signer = keys[0] as Uint8Array;
  if (ttlSeconds !== undefined && !(typeof ttlSeconds === 'number' && Number.isFinite(ttlSeconds) && ttlSeconds > 0)) {
    throw new ConfigError(`cursor.ttlSeconds must be a positive number of seconds, got ${String(ttlSeconds)}`);
  }
  if (!Number.isSafeInteger(maxLength) || maxLength < 64) throw new ConfigError(`cursor.maxLength must be an integer ≥ 64, got ${String(maxLength)}`);

  const base64 = crypto.base64url ?? { encode: encodeBase64url, decode: decodeBase64url };

  // Synchronous providers (node:crypto) answer at once: awaiting only real promises
  // saves a microtask per HMAC on the request path.
  function tag(key: Uint8Array, version: number, fingerprint: string, payload: string): Uint8Array | Promise<Uint8Array> {
    const mac = crypto.hmacSha256(key, macInput(version, fingerprint, payload));
    return mac instanceof Uint8Array ? mac.subarray(0, TAG_BYTES) : mac.then((m) => m.subarray(0, TAG_BYTES));
  }

  async function verify(text: string, fingerprint: string, sort: SortSpec): Promise<DecodedCursor> {
    if (typeof text !== 'string' || text.length > maxLength) throw new Rejected('length');
    const bytes = base64.decode(text);
    if (bytes === undefined) throw new Rejected('base64url');
    if (bytes.length < 1 + 2 + TAG_BYTES) throw new Rejected('too short');
    const version = bytes[0] as number;
    if (version !== VERSION && version !== VERSION_1) throw new Rejected('version');
    const payload = utf8Decode(bytes.subarray(1, bytes.length - TAG_BYTES));
    if (payload === undefined) throw new Rejected('utf-8');
    const given = bytes.subarray(bytes.length - TAG_BYTES);
    let valid = false;
    for (const key of keys) {
      const expected = tag(key, version, fingerprint, payload);
      if (crypto.timingSafeEqual(expected instanceof Uint8Array ? expected : await expected, given)) {
        valid = true;
        break;
      }
    }
    if (!valid) throw new Rejected('signature');
    // Signed by us, yet still checked: the sort spec's types may have changed under an old secret.
    const parsed: unknown = JSON.parse(payload);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Rejected('shape');
    const { d, p, t } = parsed as { d?: unknown; p?: unknown; t?: unknown };
    const members = Object.keys(parsed).length;
    if (!Number.isSafeInteger(t) || (t as number) < 0) throw new Rejected('shape');
    let direction: CursorDirection = 'forward';
    if (version === VERSION_1) {
      if (members !== 2 || !Array.isArray(p)) throw new Rejected('shape');
    } else {
      if (members !== 3 || (d !== 'f' && d !== 'b') || (p !== null && !Array.isArray(p))) throw new Rejected('shape');
      if (d === 'b') direction = 'backward';
    }
    const values = p as unknown[] | null;
    if (values !== null) {
      if (values.length !== sort.length) throw new Rejected('arity');
      for (let i = 0; i < values.length; i++) if (!isSortValue(sort[i] as SortKey, values[i])) throw new Rejected(`type of ${sort[i]?.key}`);
    }
    if (ttlSeconds !== undefined && clock() / 1000 - (t as number) > ttlSeconds) throw new Rejected('expired');
    if (values === null) return direction === 'forward' ? FORWARD : BACKWARD;
    return Object.freeze({ direction, position: Object.freeze(values as CursorPosition) });
  }

  return Object.freeze({
    async encode(position: CursorPosition | null, fingerprint: string, sort: SortSpec, direction: CursorDirection = 'forward'): Promise<string> {
      if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`cursor direction must be 'forward' or 'backward'`);
      if (position !== null) {
        const mismatch = positionMismatch(sort, position);
        if (mismatch !== undefined) throw new TypeError(mismatch);
      }
      const payload = JSON.stringify({ d: direction === 'forward' ? 'f' : 'b', p: position, t: Math.floor(clock() / 1000) });
      const body = utf8Encode(payload);
      const bytes = new Uint8Array(1 + body.length + TAG_BYTES);
      bytes[0] = VERSION;
      bytes.set(body, 1);
      const signature = tag(signer, VERSION, fingerprint, payload);
      bytes.set(signature instanceof Uint8Array ? signature : await signature, 1 + body.length);
      const text = base64.encode(bytes);
      if (text.length > maxLength) {
        throw new TypeError(`cursor would be ${text.length} characters, over maxLength ${maxLength}; shorten the sort values or raise cursor.maxLength`);
      }
      return text;
    },
    async decode(text: string, fingerprint: string, sort: SortSpec): Promise<DecodedCursor> {
      try {
        return await verify(text, fingerprint, sort);
      } catch (cause) {
        const expired = cause instanceof Rejected && cause.message === 'expired';
        throw new KeysetError('invalid_cursor', {
          detail: expired
            ? 'The cursor has expired; restart from the first page.'
            : 'The cursor is malformed or was not issued for this query; restart from the first page.',
          cause,
        });
      }
    },
  });
}

