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
import { decodeBase64url, decodeBase64urlInPlace, encodeBase64url, utf8Decode } from '../internal/base64url.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { isSortValue, positionMismatch } from '../internal/sort-values.ts';
import { withMaybeSync } from '../maybe-promise.ts';
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

/**
 * The codec the paginator uses: `CursorCodec` plus an encode for positions it has just
 * built from a row with `toSortValue`, which skips re-checking values already checked.
 * Internal: not exported from the package.
 */
export interface PaginatorCursorCodec extends CursorCodec {
  encodeMaybeSync(position: CursorPosition | null, fingerprint: string, sort: SortSpec, direction?: CursorDirection): string | Promise<string>;
  decodeMaybeSync(text: string, fingerprint: string, sort: SortSpec): DecodedCursor | Promise<DecodedCursor>;
  encodeChecked(position: CursorPosition | null, fingerprint: string, sort: SortSpec, direction: CursorDirection): string | Promise<string>;
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
  const { encode, decode } = createPaginatorCursorCodec(options);
  return Object.freeze({ encode, decode });
}

/** Bytes of the output buffer kept between encodes; a longer cursor gets its own. */
const MAX_SCRATCH = 4096;

/** `keyset-cursor\0`: the first bytes of every MAC input (see `macInput`). */
const MAC_LABEL = encoder.encode('keyset-cursor\u0000');
/** Where the version digit stands in a MAC input, and the fingerprint starts. */
const VERSION_AT = MAC_LABEL.length;
const FINGERPRINT_AT = VERSION_AT + 2;
const DIGIT_0 = 0x30;

/** `createCursorCodec` with the paginator's extra entry point. Internal: not exported from the package. */
export function createPaginatorCursorCodec(options: CursorCodecOptions): PaginatorCursorCodec {
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
  // A provider that MACs bytes synchronously (node:crypto) takes the byte path below.
  const hmacBytes = crypto.hmacSha256BinaryBytes;
  /** The output buffer `0x02 ‖ payload ‖ tag` is assembled in, reused by every encode. */
  let scratch = new Uint8Array(256);

  /** The tag as bytes (providers without a binary-string MAC); synchronous providers answer at once. */
  function tagBytes(key: Uint8Array, version: number, fingerprint: string, payload: string): Uint8Array | Promise<Uint8Array> {
    const mac = crypto.hmacSha256(key, macInput(version, fingerprint, payload));
    return mac instanceof Uint8Array ? mac.subarray(0, TAG_BYTES) : mac.then((m) => m.subarray(0, TAG_BYTES));
  }

  /** Whether `given` is the tag of `payload` under any secret. */
  function signedByUs(version: number, fingerprint: string, payload: string, given: Uint8Array): boolean | Promise<boolean> {
    if (hmacBinary !== undefined) {
      const input = macInput(version, fingerprint, payload);
      for (let k = 0; k < keys.length; k++) if (binaryTagEquals(hmacBinary(keys[k] as Uint8Array, input), given)) return true;
      return false;
    }
    return signedByAny(0, version, fingerprint, payload, given);
  }

  function signedByAny(from: number, version: number, fingerprint: string, payload: string, given: Uint8Array): boolean | Promise<boolean> {
    for (let i = from; i < keys.length; i++) {
      const expected = tagBytes(keys[i] as Uint8Array, version, fingerprint, payload);
      if (!(expected instanceof Uint8Array)) {
        return expected.then((bytes) => crypto.timingSafeEqual(bytes, given) || signedByAny(i + 1, version, fingerprint, payload, given));
      }
      if (crypto.timingSafeEqual(expected, given)) return true;
    }
    return false;
  }

  /** The cursor's parts once the signature is known good: shape, types, expiry. */
  function read(version: number, payload: string, sort: SortSpec): DecodedCursor {
    // Signed by us, yet still checked: the sort spec's types may have changed under an old secret.
    if (version === VERSION) {
      // The payload as `payloadText` writes it, read without JSON.parse; anything else
      // (another spelling of the same JSON, a version 1 payload) takes JSON.parse below.
      const values = scanPayload(payload);
      if (values !== NOT_SCANNED) return checked(scannedBackward ? 'backward' : 'forward', values, scannedTime, sort);
    }
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
    return checked(direction, p as unknown[] | null, t, sort);
  }

  /** The decoded cursor from its parts, once `t` is known to be JSON's number: arity, types, expiry. */
  function checked(direction: CursorDirection, values: unknown[] | null, t: unknown, sort: SortSpec): DecodedCursor {
    if (!Number.isSafeInteger(t) || (t as number) < 0) throw new Rejected('shape');
    if (values !== null) {
      if (values.length !== sort.length) throw new Rejected('arity');
      for (let i = 0; i < values.length; i++) if (!isSortValue(sort[i] as SortKey, values[i])) throw new Rejected(`type of ${sort[i]?.key}`);
    }
    if (ttlSeconds !== undefined && clock() / 1000 - (t as number) > ttlSeconds) throw new Rejected('expired');
    if (values === null) return direction === 'forward' ? FORWARD : BACKWARD;
    return Object.freeze({ direction, position: Object.freeze(values as CursorPosition) });
  }

  function verify(text: string, fingerprint: string, sort: SortSpec): DecodedCursor | Promise<DecodedCursor> {
    if (typeof text !== 'string' || text.length > maxLength) throw new Rejected('length');
    return hmacBytes !== undefined ? verifyBytes(hmacBytes, text, fingerprint, sort) : verifyText(text, fingerprint, sort);
  }

  /** Verification over the payload as text: providers without a MAC over bytes. */
  function verifyText(text: string, fingerprint: string, sort: SortSpec): DecodedCursor | Promise<DecodedCursor> {
    const bytes = base64.decode(text);
    if (bytes === undefined) throw new Rejected('base64url');
    if (bytes.length < 1 + 2 + TAG_BYTES) throw new Rejected('too short');
    const version = bytes[0] as number;
    if (version !== VERSION && version !== VERSION_1) throw new Rejected('version');
    const payload = utf8Decode(bytes.subarray(1, bytes.length - TAG_BYTES));
    if (payload === undefined) throw new Rejected('utf-8');
    const given = bytes.subarray(bytes.length - TAG_BYTES);
    const valid = signedByUs(version, fingerprint, payload, given);
    if (valid === true) return read(version, payload, sort);
    if (valid === false) throw new Rejected('signature');
    return valid.then((ok) => {
      if (!ok) throw new Rejected('signature');
      return read(version, payload, sort);
    });
  }

  // The byte path (synchronous MAC over bytes): the MAC input `keyset-cursor\0 ‖ version
  // digit ‖ \0 ‖ fingerprint ‖ \0 ‖ payload` (as `macInput` spells it, in UTF-8) is kept in
  // one buffer whose head is written once per fingerprint. A cursor is base64-decoded
  // straight into it, its version byte landing on the NUL before the payload and its tag
  // after the payload; a cursor is assembled in it the same way round. No string is built
  // for a MAC, no text is encoded twice, no byte array is made per call.
  let frame = new Uint8Array(512);
  frame.set(MAC_LABEL);
  /** The fingerprint whose bytes stand in `frame`, and where its payload starts. */
  let framedFingerprint: string | undefined;
  let payloadAt = 0;
  // Views of `frame` for the head it holds, by where the payload ends: the MAC input, the
  // payload, the cursor's bytes; and the room after the head. Cursors of one endpoint come
  // in a few lengths, so a request takes views made earlier instead of making its own.
  let inputViews: Uint8Array[] = [];
  let payloadViews: Uint8Array[] = [];
  let cursorViews: Uint8Array[] = [];
  let tail = frame;
  /** `frame` from the byte before the payload: where a cursor is decoded. */
  let cursorTail = frame;
  let viewsAt = -1;

  /** `buffer[start, end)`: a kept view when `buffer` is `frame` (cache by `end`), else a new one. */
  function range(buffer: Uint8Array, cache: Uint8Array[], start: number, end: number): Uint8Array {
    if (buffer !== frame) return buffer.subarray(start, end);
    let view = cache[end];
    if (view === undefined) cache[end] = view = buffer.subarray(start, end);
    return view;
  }

  /**
   * `frame` (or a buffer of its own, past MAX_SCRATCH) with the MAC input head for
   * `fingerprint` and room for `room` bytes after it; `payloadAt` says where they start.
   */
  function framed(fingerprint: string, room: number): Uint8Array {
    if (fingerprint === framedFingerprint && payloadAt + room <= frame.length) return frame;
    const head = FINGERPRINT_AT + fingerprint.length * 3 + 1;
    let target = frame;
    if (head + room > frame.length) {
      target = new Uint8Array(Math.max(head + room, frame.length * 2));
      target.set(MAC_LABEL);
      if (target.length <= MAX_SCRATCH) {
        frame = target;
        viewsAt = -1;
      }
    }
    let at = FINGERPRINT_AT;
    for (let i = 0; i < fingerprint.length; i++) {
      const c = fingerprint.charCodeAt(i);
      if (c >= 0x80) {
        at = FINGERPRINT_AT + encoder.encodeInto(fingerprint, target.subarray(FINGERPRINT_AT)).written;
        break;
      }
      target[at++] = c;
    }
    target[at] = 0;
    payloadAt = at + 1;
    // A buffer of its own is not remembered: the next call writes the head into `frame` again.
    framedFingerprint = target === frame ? fingerprint : undefined;
    if (target === frame && viewsAt !== payloadAt) {
      inputViews = [];
      payloadViews = [];
      cursorViews = [];
      tail = frame.subarray(payloadAt);
      cursorTail = frame.subarray(payloadAt - 1);
      viewsAt = payloadAt;
    }
    return target;
  }

  function verifyBytes(mac: NonNullable<typeof hmacBytes>, text: string, fingerprint: string, sort: SortSpec): DecodedCursor | Promise<DecodedCursor> {
    // Room for the text itself: it is copied in as ASCII and decoded where it stands.
    const buffer = framed(fingerprint, text.length);
    const at = payloadAt;
    // The version byte lands on the NUL before the payload; put back once read.
    const length = decodeBase64urlInPlace(text, buffer === frame ? cursorTail : buffer.subarray(at - 1));
    const version = buffer[at - 1] as number;
    buffer[at - 1] = 0;
    if (length < 0) throw new Rejected('base64url');
    if (length < 1 + 2 + TAG_BYTES) throw new Rejected('too short');
    if (version !== VERSION && version !== VERSION_1) throw new Rejected('version');
    const end = at - 1 + length - TAG_BYTES;
    // A leading byte-order mark is dropped by the UTF-8 decoder, so the text MAC covers
    // the payload without it: the text path keeps that rare case exactly as it was (and
    // refuses a payload that is not UTF-8 there, as here).
    if (end - at >= 3 && buffer[at] === 0xef && buffer[at + 1] === 0xbb && buffer[at + 2] === 0xbf) return verifyText(text, fingerprint, sort);
    buffer[VERSION_AT] = DIGIT_0 + version;
    const input = range(buffer, inputViews, 0, end);
    let valid = false;
    // An index, not for-of: the frozen array's iterator is not optimised away.
    for (let k = 0; k < keys.length; k++) {
      if (binaryTagAt(mac(keys[k] as Uint8Array, input), buffer, end)) {
        valid = true;
        break;
      }
    }
    // A payload that is not UTF-8 is refused as such whatever its signature, as it always
    // was: the MAC runs over the bytes, so checking UTF-8 after it changes no outcome.
    if (!valid) throw new Rejected(utf8Decode(range(buffer, payloadViews, at, end)) === undefined ? 'utf-8' : 'signature');
    if (version === VERSION) {
      // The payload's own bytes, when they are ASCII in the encoder's form: no text is made
      // for the payload, and each string value is a string of its own (see scanPayloadBytes).
      const values = scanPayloadBytes(buffer, at, end);
      if (values !== NOT_SCANNED) return checked(scannedBackward ? 'backward' : 'forward', values, scannedTime, sort);
    }
    const payload = utf8Decode(range(buffer, payloadViews, at, end));
    if (payload === undefined) throw new Rejected('utf-8');
    return read(version, payload, sort);
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

  function decodeMaybeSync(text: string, fingerprint: string, sort: SortSpec): DecodedCursor | Promise<DecodedCursor> {
    let decoded: DecodedCursor | Promise<DecodedCursor>;
    try {
      decoded = verify(text, fingerprint, sort);
    } catch (cause) {
      throw invalid(cause);
    }
    return decoded instanceof Promise
      ? decoded.catch((cause: unknown) => {
          throw invalid(cause);
        })
      : decoded;
  }

  /** Signs and assembles a cursor whose position is known to fit `sort`. */
  function sign(position: CursorPosition | null, fingerprint: string, direction: CursorDirection): string | Promise<string> {
    const issuedAt = Math.floor(clock() / 1000);
    if (hmacBytes !== undefined) {
      const end = writePayload(direction, position, issuedAt, fingerprint);
      if (end >= 0) return seal(hmacBytes, frame, payloadAt, end);
      return signBytes(hmacBytes, payloadText(direction, position, issuedAt), fingerprint);
    }
    const payload = payloadText(direction, position, issuedAt);
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
    const signature = tagBytes(signer, VERSION, fingerprint, payload);
    if (signature instanceof Uint8Array) {
      out.set(signature, 1 + written);
      return finish(base64.encode(out.subarray(0, end)));
    }
    // The shared buffer may be reused by another encode while this one waits: copy it.
    const own = out.slice(0, end);
    return signature.then((tag) => {
      own.set(tag, 1 + written);
      return finish(base64.encode(own));
    });
  }

  /** {@link sign} on the byte path: the payload encoded once, after the MAC input head, then framed as the cursor. */
  function signBytes(mac: NonNullable<typeof hmacBytes>, payload: string, fingerprint: string): string {
    // UTF-8 is at most 3 bytes per UTF-16 unit: room for the payload and the tag.
    const buffer = framed(fingerprint, payload.length * 3 + TAG_BYTES);
    const at = payloadAt;
    const end = at + encoder.encodeInto(payload, buffer === frame ? tail : buffer.subarray(at)).written;
    return seal(mac, buffer, at, end);
  }

  /**
   * The bytes of `payloadText(direction, position, issuedAt)` written straight into `frame`
   * after the head for `fingerprint`, when every value is one whose JSON is ASCII written
   * as it is (a string of printable ASCII without `"` or `\`, a finite number, a boolean,
   * null) and it fits: the payload's end; otherwise -1, and the caller goes through the text.
   */
  function writePayload(direction: CursorDirection, position: CursorPosition | null, issuedAt: number, fingerprint: string): number {
    const buffer = framed(fingerprint, 128);
    if (buffer !== frame || !Number.isSafeInteger(issuedAt)) return -1;
    const limit = buffer.length - TAG_BYTES;
    let p = payloadAt;
    buffer.set(direction === 'forward' ? OPEN_FORWARD : OPEN_BACKWARD, p);
    p += OPEN_FORWARD.length;
    if (position === null) {
      p = writeAscii(buffer, p, limit, 'null');
    } else {
      buffer[p++] = 0x5b; // [
      for (let i = 0; i < position.length && p >= 0; i++) {
        if (i > 0) {
          if (p >= limit) return -1;
          buffer[p++] = 0x2c; // ,
        }
        const value = position[i];
        if (typeof value === 'string') {
          if (p + value.length + 2 > limit) return -1;
          buffer[p++] = 0x22;
          for (let j = 0; j < value.length; j++) {
            const c = value.charCodeAt(j);
            if (c < 0x20 || c > 0x7f || c === 0x22 || c === 0x5c) return -1;
            buffer[p++] = c;
          }
          buffer[p++] = 0x22;
        } else if (typeof value === 'number' && Number.isSafeInteger(value)) {
          p = writeInteger(buffer, p, limit, value);
        } else if ((typeof value === 'number' && Number.isFinite(value)) || value === null || value === true || value === false) {
          p = writeAscii(buffer, p, limit, `${value}`);
        } else {
          return -1;
        }
      }
      if (p < 0 || p >= limit) return -1;
      buffer[p++] = 0x5d; // ]
    }
    p = writeAscii(buffer, p, limit, ',"t":');
    p = writeInteger(buffer, p, limit, issuedAt);
    if (p < 0 || p >= limit) return -1;
    buffer[p++] = 0x7d; // }
    return p;
  }

  /** Signs the payload standing in `buffer[at, end)` after its MAC head and returns the cursor text. */
  function seal(mac: NonNullable<typeof hmacBytes>, buffer: Uint8Array, at: number, end: number): string {
    buffer[VERSION_AT] = DIGIT_0 + VERSION;
    const tag = mac(signer, range(buffer, inputViews, 0, end));
    for (let i = 0; i < TAG_BYTES; i++) buffer[end + i] = tag.charCodeAt(i);
    buffer[at - 1] = VERSION;
    const text = base64.encode(range(buffer, cursorViews, at - 1, end + TAG_BYTES));
    buffer[at - 1] = 0;
    return finish(text);
  }

  function finish(text: string): string {
    if (text.length > maxLength) {
      throw new TypeError(`cursor would be ${text.length} characters, over maxLength ${maxLength}; shorten the sort values or raise cursor.maxLength`);
    }
    return text;
  }

  function encodeMaybeSync(position: CursorPosition | null, fingerprint: string, sort: SortSpec, direction: CursorDirection = 'forward'): string | Promise<string> {
    if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`cursor direction must be 'forward' or 'backward'`);
    if (position !== null) {
      const mismatch = positionMismatch(sort, position);
      if (mismatch !== undefined) throw new TypeError(mismatch);
    }
    return sign(position, fingerprint, direction);
  }

  return Object.freeze({
    // Synchronous with a synchronous crypto provider (see maybe-promise.ts).
    encode: withMaybeSync(encodeMaybeSync),
    decode: withMaybeSync(decodeMaybeSync),
    encodeMaybeSync,
    decodeMaybeSync,
    encodeChecked(position: CursorPosition | null, fingerprint: string, _sort: SortSpec, direction: CursorDirection): string | Promise<string> {
      return sign(position, fingerprint, direction);
    },
  });
}

/** Whether the first 16 characters of a binary-string MAC equal `bytes[at, at + 16)`, without an early exit. */
function binaryTagAt(mac: string, bytes: Uint8Array, at: number): boolean {
  let diff = mac.length < TAG_BYTES ? 1 : 0;
  for (let i = 0; i < TAG_BYTES; i++) diff |= mac.charCodeAt(i) ^ (bytes[at + i] as number);
  return diff === 0;
}

/** `{"d":"f","p":` and `{"d":"b","p":`, as bytes. */
const OPEN_FORWARD = encoder.encode('{"d":"f","p":');
const OPEN_BACKWARD = encoder.encode('{"d":"b","p":');

/** Writes ASCII `text` at `p` if it fits before `limit`: the position after it, or -1 (also for `p` = -1). */
function writeAscii(buffer: Uint8Array, p: number, limit: number, text: string): number {
  if (p < 0 || p + text.length > limit) return -1;
  for (let i = 0; i < text.length; i++) buffer[p++] = text.charCodeAt(i);
  return p;
}

/**
 * Writes the safe integer `n` as `String(n)` spells it (plain decimal digits, `-` before a
 * negative one, `0` for -0) at `p` if it fits before `limit`: the position after it, or -1
 * (also for `p` = -1). Digit by digit, without the string `${n}` would make.
 */
function writeInteger(buffer: Uint8Array, p: number, limit: number, n: number): number {
  if (p < 0) return -1;
  if (n < 0) {
    if (p >= limit) return -1;
    buffer[p++] = 0x2d; // -
    n = -n;
  }
  if (n > 0x7fffffff) return writeAscii(buffer, p, limit, `${n}`);
  let digits = 1;
  for (let rest = n; rest >= 10; digits++) rest = (rest / 10) | 0;
  if (p + digits > limit) return -1;
  for (let i = p + digits - 1; i >= p; i--) {
    const next = (n / 10) | 0;
    buffer[i] = 0x30 + n - next * 10;
    n = next;
  }
  return p + digits;
}

/** What `scanPayload` returns for a payload not in `payloadText`'s own form. */
const NOT_SCANNED = Symbol('not scanned');
/** The direction and time `scanPayload` read, beside the position it returns. */
let scannedBackward = false;
let scannedTime = 0;

/**
 * The position of a version 2 payload written as `payloadText` writes it: exactly
 * `{"d":"f"|"b","p":null|[values],"t":number}`, values being `null`, `true`, `false`,
 * JSON numbers and strings without escapes, and no whitespace; sets `scannedBackward`
 * and `scannedTime`. Anything else, valid JSON or not, is `NOT_SCANNED` and goes to
 * `JSON.parse`, so what is accepted, and how it reads, is exactly what `JSON.parse` says.
 */
function scanPayload(text: string): unknown[] | null | typeof NOT_SCANNED {
  if (!text.startsWith('{"d":"')) return NOT_SCANNED;
  const d = text.charCodeAt(6);
  if ((d !== 0x66 /* f */ && d !== 0x62) /* b */ || !text.startsWith('","p":', 7)) return NOT_SCANNED;
  let i = 13;
  let values: unknown[] | null = null;
  if (text.startsWith('null', i)) {
    i += 4;
  } else if (text.charCodeAt(i) === 0x5b /* [ */) {
    values = [];
    i++;
    if (text.charCodeAt(i) === 0x5d /* ] */) {
      i++;
    } else {
      for (;;) {
        const c = text.charCodeAt(i);
        if (c === 0x22 /* " */) {
          let j = i + 1;
          for (let u = text.charCodeAt(j); u !== 0x22; u = text.charCodeAt(++j)) {
            // An escape, a control character or the end of the text (NaN): JSON.parse decides.
            if (!(u >= 0x20) || u === 0x5c /* \ */) return NOT_SCANNED;
          }
          values.push(text.slice(i + 1, j));
          i = j + 1;
        } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
          const j = numberEnd(text, i);
          if (j < 0) return NOT_SCANNED;
          values.push(numberAt(text, i, j));
          i = j;
        } else if (text.startsWith('null', i)) {
          values.push(null);
          i += 4;
        } else if (text.startsWith('true', i)) {
          values.push(true);
          i += 4;
        } else if (text.startsWith('false', i)) {
          values.push(false);
          i += 5;
        } else {
          return NOT_SCANNED;
        }
        const next = text.charCodeAt(i++);
        if (next === 0x5d /* ] */) break;
        if (next !== 0x2c /* , */) return NOT_SCANNED;
      }
    }
  } else {
    return NOT_SCANNED;
  }
  if (!text.startsWith(',"t":', i)) return NOT_SCANNED;
  i += 5;
  const end = numberEnd(text, i);
  if (end < 0 || end !== text.length - 1 || text.charCodeAt(end) !== 0x7d /* } */) return NOT_SCANNED;
  scannedBackward = d === 0x62;
  scannedTime = numberAt(text, i, end);
  return values;
}

/**
 * {@link scanPayload} over the payload's UTF-8 bytes `bytes[start, end)`, for the common
 * case only: every byte ASCII, strings of printable characters without escapes, numbers
 * integers of at most 15 digits (exact), `null`, `true`, `false`. Anything else, a byte
 * past 0x7f included, is `NOT_SCANNED` and the caller takes the text (`scanPayload`, then
 * `JSON.parse`), so this reads only payloads on which both agree, and reads them alike.
 * Each string value is decoded from its own bytes: a flat string, where a slice of the
 * payload's text would be a V8 sliced string, which every `<`, `>` or `===` the caller's
 * source runs against it (a keyset walk compares the position with its rows) sends down
 * the runtime's slow path.
 */
function scanPayloadBytes(bytes: Uint8Array, start: number, end: number): unknown[] | null | typeof NOT_SCANNED {
  // `{"d":"f","p":null,"t":0}`, the shortest payload in the encoder's form.
  if (end - start < 24) return NOT_SCANNED;
  for (let k = 0; k < OPEN_FORWARD.length; k++) if (k !== 6 && bytes[start + k] !== OPEN_FORWARD[k]) return NOT_SCANNED;
  const d = bytes[start + 6];
  if (d !== 0x66 /* f */ && d !== 0x62 /* b */) return NOT_SCANNED;
  let i = start + OPEN_FORWARD.length;
  let values: unknown[] | null = null;
  if (bytes[i] === 0x6e && bytes[i + 1] === 0x75 && bytes[i + 2] === 0x6c && bytes[i + 3] === 0x6c /* null */) {
    i += 4;
  } else if (bytes[i] === 0x5b /* [ */) {
    values = [];
    i++;
    if (i < end && bytes[i] === 0x5d /* ] */) {
      i++;
    } else {
      for (;;) {
        if (i >= end) return NOT_SCANNED;
        const c = bytes[i] as number;
        if (c === 0x22 /* " */) {
          let j = i + 1;
          for (;;) {
            if (j >= end) return NOT_SCANNED;
            const u = bytes[j] as number;
            if (u === 0x22) break;
            // A control character, an escape or a byte past ASCII: the text path decides.
            if (u < 0x20 || u > 0x7f || u === 0x5c /* \ */) return NOT_SCANNED;
            j++;
          }
          values.push(i + 1 === j ? '' : (utf8Decode(bytes.subarray(i + 1, j)) as string));
          i = j + 1;
        } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
          const j = integerEnd(bytes, i, end);
          if (j < 0) return NOT_SCANNED;
          values.push(scannedInteger);
          i = j;
        } else if (i + 4 <= end && c === 0x6e && bytes[i + 1] === 0x75 && bytes[i + 2] === 0x6c && bytes[i + 3] === 0x6c /* null */) {
          values.push(null);
          i += 4;
        } else if (i + 4 <= end && c === 0x74 && bytes[i + 1] === 0x72 && bytes[i + 2] === 0x75 && bytes[i + 3] === 0x65 /* true */) {
          values.push(true);
          i += 4;
        } else if (i + 5 <= end && c === 0x66 && bytes[i + 1] === 0x61 && bytes[i + 2] === 0x6c && bytes[i + 3] === 0x73 && bytes[i + 4] === 0x65 /* false */) {
          values.push(false);
          i += 5;
        } else {
          return NOT_SCANNED;
        }
        if (i >= end) return NOT_SCANNED;
        const next = bytes[i++];
        if (next === 0x5d /* ] */) break;
        if (next !== 0x2c /* , */) return NOT_SCANNED;
      }
    }
  } else {
    return NOT_SCANNED;
  }
  // `,"t":` then the time, the payload's last byte `}`.
  if (i + 5 > end || bytes[i] !== 0x2c || bytes[i + 1] !== 0x22 || bytes[i + 2] !== 0x74 || bytes[i + 3] !== 0x22 || bytes[i + 4] !== 0x3a) return NOT_SCANNED;
  const timeEnd = integerEnd(bytes, i + 5, end);
  if (timeEnd < 0 || timeEnd !== end - 1 || bytes[timeEnd] !== 0x7d /* } */) return NOT_SCANNED;
  scannedBackward = d === 0x62;
  scannedTime = scannedInteger;
  return values;
}

/** The integer `integerEnd` last read. */
let scannedInteger = 0;

/**
 * Where the JSON integer `-?(0|[1-9][0-9]*)` of at most 15 digits starting at `bytes[i]`
 * ends (before `end`), its value in `scannedInteger` (-0 for `-0`, as `Number` reads it);
 * -1 when none starts there, it has more digits, or a fraction or exponent follows.
 */
function integerEnd(bytes: Uint8Array, i: number, end: number): number {
  const negative = bytes[i] === 0x2d;
  if (negative) i++;
  if (i >= end) return -1;
  let n = 0;
  const first = bytes[i] as number;
  if (first === 0x30) {
    i++;
  } else if (first >= 0x31 && first <= 0x39) {
    const digits = i;
    for (let c = first; i < end && c >= 0x30 && c <= 0x39; c = bytes[++i] as number) n = n * 10 + (c - 0x30);
    if (i - digits > 15) return -1;
  } else {
    return -1;
  }
  if (i < end) {
    const c = bytes[i];
    if (c === 0x2e /* . */ || c === 0x65 || c === 0x45 /* e E */) return -1;
  }
  scannedInteger = negative ? -n : n;
  return i;
}

/** Where the JSON number (RFC 8259 §6) starting at `i` ends, or -1 when none starts there. */
function numberEnd(text: string, i: number): number {
  if (text.charCodeAt(i) === 0x2d) i++;
  const first = text.charCodeAt(i);
  if (first === 0x30) i++;
  else if (first >= 0x31 && first <= 0x39) i = digitsEnd(text, i + 1);
  else return -1;
  if (text.charCodeAt(i) === 0x2e /* . */) {
    const j = digitsEnd(text, i + 1);
    if (j === i + 1) return -1;
    i = j;
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45 /* e E */) {
    let j = i + 1;
    const sign = text.charCodeAt(j);
    if (sign === 0x2b || sign === 0x2d) j++;
    const k = digitsEnd(text, j);
    if (k === j) return -1;
    i = k;
  }
  return i;
}

/**
 * The value of the JSON number `text[i, end)`: what `Number` reads, computed from the
 * digits for an integer of up to 15 of them (exact: below 2^53), else by `Number`.
 */
function numberAt(text: string, i: number, end: number): number {
  const negative = text.charCodeAt(i) === 0x2d;
  let n = 0;
  if (end - i <= 15) {
    for (let k = negative ? i + 1 : i; k < end; k++) {
      const d = text.charCodeAt(k) - 0x30;
      if (d < 0 || d > 9) return Number(text.slice(i, end));
      n = n * 10 + d;
    }
    // -0 stays -0, as Number('-0') says.
    return negative ? -n : n;
  }
  return Number(text.slice(i, end));
}

function digitsEnd(text: string, i: number): number {
  for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++i));
  return i;
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
export function payloadText(direction: CursorDirection, position: CursorPosition | null, issuedAt: number): string {
  const t = Number.isSafeInteger(issuedAt) ? `${issuedAt}` : JSON.stringify(issuedAt);
  return `{"d":"${direction === 'forward' ? 'f' : 'b'}","p":${position === null ? 'null' : positionJson(position)},"t":${t}}`;
}

/**
 * `JSON.stringify(position)`, written by hand for the values cursors hold: strings that
 * need no escape, finite numbers, booleans, null. Anything else is left to JSON.stringify.
 */
function positionJson(position: CursorPosition): string {
  let out = '[';
  for (let i = 0; i < position.length; i++) {
    const value = position[i];
    if (i > 0) out += ',';
    if (typeof value === 'string') {
      if (!plainString(value)) return JSON.stringify(position);
      out += `"${value}"`;
    } else if (typeof value === 'number') {
      // A finite number's JSON is its String (-0 included: both say "0").
      if (!Number.isFinite(value)) return JSON.stringify(position);
      out += `${value}`;
    } else if (value === null || value === true || value === false) {
      out += `${value}`;
    } else {
      return JSON.stringify(position);
    }
  }
  return `${out}]`;
}

/** Whether JSON.stringify writes `text` between quotes as it is: no quote, backslash, control character or surrogate. */
function plainString(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}
