/**
 * The cursor codec as it was before its byte-level fast path (commit 75c2f73), kept
 * verbatim as the reference the differential property tests hold the current codec to:
 * the same cursors, the same accepted payloads, the same decoded values.
 * Test support only: not part of the package.
 * @module
 */
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { decodeBase64url, encodeBase64url, utf8Decode } from '../internal/base64url.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { isSortValue, positionMismatch } from '../internal/sort-values.ts';
import type { CursorCodecOptions, DecodedCursor, PaginatorCursorCodec } from './cursor-codec.ts';
import type { CursorDirection, CursorPosition, SortKey, SortSpec } from '../pagination/types.ts';

const VERSION = 2;
const TAG_BYTES = 16;
const MIN_SECRET_BYTES = 32;

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

/** Bytes of the output buffer kept between encodes; a longer cursor gets its own. */
const MAX_SCRATCH = 4096;

/** The reference codec (the paginator's codec as it was). */
export function createReferenceCursorCodec(options: CursorCodecOptions): PaginatorCursorCodec {
  const { secrets, ttlSeconds, maxLength = 2048, crypto = defaultCrypto, clock = systemClock } = options;
  if (!Array.isArray(secrets) || secrets.length === 0) throw new ConfigError('cursor.secrets must be a non-empty array');
  const keys = Object.freeze(secrets.map(secretBytes));
  const signer = keys[0] as Uint8Array;
  if (ttlSeconds !== undefined && !(typeof ttlSeconds === 'number' && Number.isFinite(ttlSeconds) && ttlSeconds > 0)) {
    throw new ConfigError(`cursor.ttlSeconds must be a positive number of seconds, got ${String(ttlSeconds)}`);
  }
  if (!Number.isSafeInteger(maxLength) || maxLength < 64) throw new ConfigError(`cursor.maxLength must be an integer ≥ 64, got ${String(maxLength)}`);

  const base64 = crypto.base64url ?? { encode: encodeBase64url, decode: decodeBase64url };
  // A provider that hands the MAC over as a binary string (node:crypto) saves a byte
  // array per MAC; the tag is compared or copied from the string's first 16 characters.
  const hmacBinary = crypto.hmacSha256Binary;
  /** The output buffer `0x02 ‖ payload ‖ tag` is assembled in, reused by every encode. */
  let scratch = new Uint8Array(256);

  /** The tag as bytes (providers without a binary-string MAC); synchronous providers answer at once. */
  async function tagBytes(key: Uint8Array, version: number, fingerprint: string, payload: string): Promise<Uint8Array> {
    return (await crypto.hmacSha256(key, macInput(version, fingerprint, payload))).subarray(0, TAG_BYTES);
  }

  /** Whether `given` is the tag of `payload` under any secret. */
  async function signedByUs(version: number, fingerprint: string, payload: string, given: Uint8Array): Promise<boolean> {
    if (hmacBinary !== undefined) {
      const input = macInput(version, fingerprint, payload);
      for (const key of keys) if (binaryTagEquals(hmacBinary(key, input), given)) return true;
      return false;
    }
    for (const key of keys) if (crypto.timingSafeEqual(await tagBytes(key, version, fingerprint, payload), given)) return true;
    return false;
  }

  /** The cursor's parts once the signature is known good: shape, types, expiry. */
  function read(payload: string, sort: SortSpec): DecodedCursor {
    // Signed by us, yet still checked: the sort spec's types may have changed under an old secret.
    const parsed: unknown = JSON.parse(payload);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Rejected('shape');
    const { d, p, t } = parsed as { d?: unknown; p?: unknown; t?: unknown };
    const members = Object.keys(parsed).length;
    if (!Number.isSafeInteger(t) || (t as number) < 0) throw new Rejected('shape');
    if (members !== 3 || (d !== 'f' && d !== 'b') || (p !== null && !Array.isArray(p))) throw new Rejected('shape');
    const direction: CursorDirection = d === 'b' ? 'backward' : 'forward';
    const values = p as unknown[] | null;
    if (values !== null) {
      if (values.length !== sort.length) throw new Rejected('arity');
      for (let i = 0; i < values.length; i++) if (!isSortValue(sort[i] as SortKey, values[i])) throw new Rejected(`type of ${sort[i]?.key}`);
    }
    if (ttlSeconds !== undefined && clock() / 1000 - (t as number) > ttlSeconds) throw new Rejected('expired');
    if (values === null) return direction === 'forward' ? FORWARD : BACKWARD;
    return Object.freeze({ direction, position: Object.freeze(values as CursorPosition) });
  }

  async function verify(text: string, fingerprint: string, sort: SortSpec): Promise<DecodedCursor> {
    if (typeof text !== 'string' || text.length > maxLength) throw new Rejected('length');
    const bytes = base64.decode(text);
    if (bytes === undefined) throw new Rejected('base64url');
    if (bytes.length < 1 + 2 + TAG_BYTES) throw new Rejected('too short');
    const version = bytes[0] as number;
    if (version !== VERSION) throw new Rejected('version');
    const payload = utf8Decode(bytes.subarray(1, bytes.length - TAG_BYTES));
    if (payload === undefined) throw new Rejected('utf-8');
    const given = bytes.subarray(bytes.length - TAG_BYTES);
    if (!(await signedByUs(version, fingerprint, payload, given))) throw new Rejected('signature');
    return read(payload, sort);
  }

  function invalid(cause: unknown): KeysetError {
    const expired = cause instanceof Rejected && cause.message === 'expired';
    return new KeysetError('invalid_cursor', {
      detail: expired
        ? 'The cursor has expired; restart from the first page.'
        : 'The cursor is malformed or was not issued for this query; restart from the first page.',
      cause,
    });
  }

  async function decode(text: string, fingerprint: string, sort: SortSpec): Promise<DecodedCursor> {
    try {
      return await verify(text, fingerprint, sort);
    } catch (cause) {
      throw invalid(cause);
    }
  }

  /** Signs and assembles a cursor whose position is known to fit `sort`. */
  async function sign(position: CursorPosition | null, fingerprint: string, direction: CursorDirection): Promise<string> {
    const payload = payloadText(direction, position, Math.floor(clock() / 1000));
    // UTF-8 is at most 3 bytes per UTF-16 unit: room for the version, payload and tag.
    const room = 1 + payload.length * 3 + TAG_BYTES;
    let out = scratch;
    if (out.length < room) {
      out = new Uint8Array(room);
      if (room <= MAX_SCRATCH) scratch = out;
    }
    out[0] = VERSION;
    const written = encoder.encodeInto(payload, out.subarray(1)).written;
    const end = 1 + written + TAG_BYTES;
    if (hmacBinary !== undefined) {
      const mac = hmacBinary(signer, macInput(VERSION, fingerprint, payload));
      for (let i = 0; i < TAG_BYTES; i++) out[1 + written + i] = mac.charCodeAt(i);
      return finish(base64.encode(out.subarray(0, end)));
    }
    // The shared buffer may be reused by another encode while this one waits: copy it.
    const own = out.slice(0, end);
    own.set(await tagBytes(signer, VERSION, fingerprint, payload), 1 + written);
    return finish(base64.encode(own));
  }

  function finish(text: string): string {
    if (text.length > maxLength) {
      throw new TypeError(`cursor would be ${text.length} characters, over maxLength ${maxLength}; shorten the sort values or raise cursor.maxLength`);
    }
    return text;
  }

  async function encode(position: CursorPosition | null, fingerprint: string, sort: SortSpec, direction: CursorDirection = 'forward'): Promise<string> {
    if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`cursor direction must be 'forward' or 'backward'`);
    if (position !== null) {
      const mismatch = positionMismatch(sort, position);
      if (mismatch !== undefined) throw new TypeError(mismatch);
    }
    return sign(position, fingerprint, direction);
  }

  return Object.freeze({
    encode,
    decode,
    encodeChecked(position: CursorPosition | null, fingerprint: string, direction: CursorDirection): Promise<string> {
      return sign(position, fingerprint, direction);
    },
  });
}

/**
 * Whether the first 16 characters of a binary-string MAC equal the 16 tag bytes `given`,
 * in time that does not depend on where they differ (no early exit).
 */
function binaryTagEquals(mac: string, given: Uint8Array): boolean {
  if (given.length !== TAG_BYTES || mac.length < TAG_BYTES) return false;
  let diff = 0;
  for (let i = 0; i < TAG_BYTES; i++) diff |= mac.charCodeAt(i) ^ (given[i] as number);
  return diff === 0;
}

/**
 * `JSON.stringify({ d, p, t })`, character for character, without the object: the
 * members in that order, `d` as `"f"`/`"b"`, `p` stringified as JSON (`null` for none),
 * `t` an integer number of seconds. Internal: not exported from the package.
 */
function payloadText(direction: CursorDirection, position: CursorPosition | null, issuedAt: number): string {
  return `{"d":"${direction === 'forward' ? 'f' : 'b'}","p":${position === null ? 'null' : JSON.stringify(position)},"t":${JSON.stringify(issuedAt)}}`;
}
