/**
 * Signed, versioned, opaque cursors.
 *
 * Wire format: base64url, no padding, of `0x02 ‖ payload ‖ tag`, where
 * - `0x02` is the format version;
 * - `payload` is UTF-8 JSON `{"d":"f"|"b","p":[...sort values]|null,"t":issuedAtSeconds}`
 *   (`JSON.stringify` of that object): the direction (forward = after the position,
 *   backward = before it), the position, values typed per the sort spec
 *   (bigint/decimal/timestamp as text, so nothing is rounded), or `null` for "from the
 *   start" (forward) / "from the end" (backward);
 * - `tag` is HMAC-SHA256 truncated to its first 16 bytes (128 bits, well above the
 *   64-bit floor of RFC 2104 §5 and NIST SP 800-107) over the UTF-8 bytes of
 *   `keyset-cursor\0 ‖ version digit ‖ \0 ‖ fingerprint ‖ \0 ‖ payload`.
 *
 * One path each way. Encode: `JSON.stringify` → `TextEncoder.encodeInto` (after the MAC
 * input's prefix, in one frame) → MAC over those bytes → base64url.
 * Decode: base64url → version → strict UTF-8 (`fatal`, a leading U+FEFF kept, so the
 * text is exactly the bytes received and the MAC below covers exactly those bytes) →
 * tag compared in constant time against every secret → `JSON.parse` → shape, types,
 * expiry and issue time. Every failure is the same `invalid_cursor` 400, so a bad cursor
 * never becomes a 500 or a silent first page; the reason is the error's `cause`. The
 * provider's own base64url and binary-string MAC are used where it has them (see below).
 * @module
 */
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { decodeBase64url, encodeBase64url } from '../internal/base64url.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { toByteString } from '../internal/hex.ts';
import { isSortValue, positionMismatch } from '../internal/sort-values.ts';
import { THROWAWAY_SECRET_PREFIX } from './cursor-secrets.ts';
import type { CursorDirection, CursorPosition, SortKey, SortSpec } from '../pagination/types.ts';

const VERSION = 2;
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
   * How far (seconds) a cursor's issue time may lie ahead of this server's clock: the
   * clock skew allowed between the instances that issue and accept cursors. A cursor
   * stamped further ahead is refused, so a fast clock cannot mint cursors that outlive
   * `ttlSeconds`.
   * @default 60
   */
  clockSkewSeconds?: number;
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

/** Every name `CursorCodecOptions` knows, checked when the codec is made. */
const CODEC_OPTIONS = { secrets: true, ttlSeconds: true, clockSkewSeconds: true, maxLength: true, crypto: true, clock: true } as const satisfies KnownOptions<CursorCodecOptions>;

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
  /** The cursor, or a promise of it when the provider's MAC is asynchronous (Web Crypto); throws `TypeError` for a bad direction. */
  encodeChecked(position: CursorPosition | null, fingerprint: string, direction: CursorDirection): string | Promise<string>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function secretBytes(secret: string | Uint8Array, index: number): Uint8Array {
  const bytes = typeof secret === 'string' ? encoder.encode(secret) : secret instanceof Uint8Array ? new Uint8Array(secret) : undefined;
  // `[process.env.CURSOR_SECRET!]` with the variable unset (or set to nothing) is the usual
  // way here: say what the value is and point to cursorSecrets(), which names the variable.
  if (bytes === undefined) {
    throw new ConfigError(
      secret === undefined || secret === null
        ? `cursor secrets[${index}] is ${String(secret)}: an environment variable that is not set? Read secrets with ` +
            '`cursorSecrets(process.env.CURSOR_SECRET)`, which names the missing variable (and takes { development: true } for a throwaway secret on a developer machine)'
        : `cursor secrets[${index}] must be a string or a Uint8Array, got ${Array.isArray(secret) ? 'an array' : typeof secret}`,
    );
  }
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new ConfigError(
      bytes.length === 0
        ? `cursor secrets[${index}] is empty: an environment variable set to nothing? Read secrets with \`cursorSecrets(process.env.CURSOR_SECRET)\`, which names the variable, and set it to at least ${MIN_SECRET_BYTES} random bytes (e.g. \`openssl rand -base64 32\`)`
        : `cursor secrets[${index}] is ${bytes.length} bytes; use at least ${MIN_SECRET_BYTES} random bytes (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return bytes;
}

/**
 * Whether the last 16 bytes of `bytes` equal the first 16 characters of the binary-string
 * MAC `mac`, in time that does not depend on where they differ (no early exit).
 */
function endsWithTag(bytes: Uint8Array, mac: string): boolean {
  const at = bytes.length - TAG_BYTES;
  let diff = mac.length < TAG_BYTES ? 1 : 0;
  for (let i = 0; i < TAG_BYTES; i++) diff |= mac.charCodeAt(i) ^ (bytes[at + i] as number);
  return diff === 0;
}

const FORWARD: DecodedCursor = Object.freeze({ direction: 'forward', position: null });
const BACKWARD: DecodedCursor = Object.freeze({ direction: 'backward', position: null });

/** Why a cursor was refused: the `cause` of its `invalid_cursor` error, for logs. */
class Rejected extends Error {}

/**
 * Creates a cursor codec. Throws `ConfigError` for no secrets, a secret shorter than
 * 32 bytes, or a bad `ttlSeconds`/`clockSkewSeconds`/`maxLength`.
 *
 * @example
 * ```ts
 * const sort = defineSortSpec([
 *   { key: 'createdAt', dir: 'desc', type: 'timestamp' },
 *   { key: 'id', dir: 'desc', type: 'int', unique: true },
 * ]);
 * const codec = createCursorCodec({ secrets: cursorSecrets(process.env.CURSOR_SECRET), ttlSeconds: 3600 });
 * // One cursor-form value per sort key: timestamp text, then an int as a number.
 * const text = await codec.encode(['2024-05-01 10:00:00.123456+00', 42], fingerprint, sort);
 * const { direction, position } = await codec.decode(text, fingerprint, sort); // 'forward', ['2024-05-01 10:00:00.123456+00', 42]
 * ```
 */
export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  assertKnownOptions('createCursorCodec', options, CODEC_OPTIONS);
  const { encode, decode } = createPaginatorCursorCodec(options);
  return Object.freeze({ encode, decode });
}

/** `createCursorCodec` with the paginator's extra entry points. Internal: not exported from the package. */
export function createPaginatorCursorCodec(options: CursorCodecOptions): PaginatorCursorCodec {
  const { secrets, ttlSeconds, clockSkewSeconds = 60, maxLength = 2048, crypto = defaultCrypto, clock = systemClock } = options;
  if (!Array.isArray(secrets) || secrets.length === 0) throw new ConfigError('cursor.secrets must be a non-empty array');
  const keys = Object.freeze(secrets.map(secretBytes));
  const signer = keys[0] as Uint8Array;
  // Signing with a secret `cursorSecrets({ development: true })` made for this process.
  const throwaway = typeof secrets[0] === 'string' && secrets[0].startsWith(THROWAWAY_SECRET_PREFIX);
  if (ttlSeconds !== undefined && !(typeof ttlSeconds === 'number' && Number.isFinite(ttlSeconds) && ttlSeconds > 0)) {
    throw new ConfigError(`cursor.ttlSeconds must be a positive number of seconds, got ${String(ttlSeconds)}`);
  }
  if (!(typeof clockSkewSeconds === 'number' && Number.isFinite(clockSkewSeconds) && clockSkewSeconds >= 0)) {
    throw new ConfigError(`cursor.clockSkewSeconds must be a number of seconds ≥ 0, got ${String(clockSkewSeconds)}`);
  }
  if (!Number.isSafeInteger(maxLength) || maxLength < 64) throw new ConfigError(`cursor.maxLength must be an integer ≥ 64, got ${String(maxLength)}`);

  // Two capabilities of the provider, each one expression here, the rest of the codec the
  // same for every provider. The runtime's own base64url (Buffer's, on Node) where the
  // provider has one: native code for the one decode and two encodes of a page, where the
  // portable loops are measurably slower (`bench inprocess-ab` against a build using
  // them). The MAC over the frame's bytes, as a
  // binary string (one character per byte), where the provider can take bytes and hand it
  // over so; otherwise over the same bytes read back as text (valid UTF-8: the frame holds
  // encoded text and checked payloads) through the provider's plain `hmacSha256`.
  const base64 = crypto.base64url ?? { encode: encodeBase64url, decode: decodeBase64url };
  // Callers await it either way; an async function here would add a promise per MAC
  // for the providers that answer at once.
  const macOfText = async (key: Uint8Array, input: Uint8Array): Promise<string> => toByteString(await crypto.hmacSha256(key, decoder.decode(input)));
  const binaryMac = crypto.hmacSha256BinaryBytes?.bind(crypto);
  const mac: (key: Uint8Array, input: Uint8Array) => string | Promise<string> = binaryMac ?? macOfText;

  // The MAC input `keyset-cursor\0 ‖ version ‖ \0 ‖ fingerprint ‖ \0 ‖ payload` is written
  // into a frame with room for the tag after it; the cursor is the frame from the prefix's
  // last NUL (the version byte while it is read out) to the end of the tag, so the payload
  // is encoded once, where the MAC, the tag and base64url read it. A frame belongs to one
  // call from `frameOf()` to `giveFrame()`, across any await of the MAC: nothing another
  // request does can change it. One frame is kept for the next call, because a fresh typed
  // array of this size is allocated outside the JS heap, which costs several times what the
  // reuse does (measured in the project's same-process A/B); with a MAC that answers at once
  // it serves every call, and calls that overlap while an asynchronous MAC works make their
  // own. The prefix is the same for every cursor under one fingerprint (a page decodes and
  // encodes under one): the last one is kept, as bytes nobody writes to.
  const maxBytes = Math.floor((maxLength * 3) / 4);
  let prefixOf: string | undefined;
  let prefix = new Uint8Array(0);
  let spare: Uint8Array | undefined;

  /** A frame of this call's own holding the MAC input up to `end`, the payload from `at`. */
  function frameOf(fingerprint: string, payload: string | Uint8Array): { bytes: Uint8Array; at: number; end: number } {
    if (fingerprint !== prefixOf) {
      // NUL cannot occur in a base64url fingerprint, and JSON.stringify escapes it in the payload.
      prefix = encoder.encode(`keyset-cursor\u0000${VERSION}\u0000${fingerprint}\u0000`);
      prefixOf = fingerprint;
    }
    const at = prefix.length;
    let bytes = spare;
    spare = undefined;
    if (bytes === undefined || bytes.length < at + maxBytes) bytes = new Uint8Array(at + maxBytes);
    bytes.set(prefix);
    if (typeof payload !== 'string') {
      bytes.set(payload, at);
      return { bytes, at, end: at + payload.length };
    }
    const { read, written } = encoder.encodeInto(payload, bytes.subarray(at, at + maxBytes - 1 - TAG_BYTES));
    if (read < payload.length) {
      const length = Math.ceil(((1 + encoder.encode(payload).length + TAG_BYTES) * 4) / 3);
      throw new TypeError(`cursor would be ${length} characters, over maxLength ${maxLength}; shorten the sort values or raise cursor.maxLength`);
    }
    return { bytes, at, end: at + written };
  }

  function giveFrame(bytes: Uint8Array): void {
    spare = bytes;
  }

  /** Whether the last 16 bytes of `bytes` are the tag of `input` under a secret after the first. */
  async function signedByOthers(input: Uint8Array, bytes: Uint8Array): Promise<boolean> {
    for (let i = 1; i < keys.length; i++) if (endsWithTag(bytes, await mac(keys[i] as Uint8Array, input))) return true;
    return false;
  }

  /** The cursor's parts once the signature is known good: shape, types, expiry, issue time. */
  function read(payload: string, sort: SortSpec): DecodedCursor {
    // Signed by us, yet still checked: the sort spec's types may have changed under an old secret.
    const parsed: unknown = JSON.parse(payload);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Rejected('shape');
    const { d, p, t } = parsed as { d?: unknown; p?: unknown; t?: unknown };
    const members = Object.keys(parsed).length;
    if (!Number.isSafeInteger(t) || (t as number) < 0) throw new Rejected('shape');
    if (members !== 3 || (d !== 'f' && d !== 'b') || (p !== null && !Array.isArray(p))) throw new Rejected('shape');
    const values = p as unknown[] | null;
    if (values !== null) {
      if (values.length !== sort.length) throw new Rejected('arity');
      for (let i = 0; i < values.length; i++) if (!isSortValue(sort[i] as SortKey, values[i])) throw new Rejected(`type of ${sort[i]?.key}`);
    }
    const now = clock() / 1000;
    if (ttlSeconds !== undefined && now - (t as number) > ttlSeconds) throw new Rejected('expired');
    if ((t as number) - now > clockSkewSeconds) throw new Rejected('future');
    const direction: CursorDirection = d === 'b' ? 'backward' : 'forward';
    if (values === null) return direction === 'forward' ? FORWARD : BACKWARD;
    return Object.freeze({ direction, position: Object.freeze(values as CursorPosition) });
  }

  function invalid(cause: unknown): KeysetError {
    const reason = cause instanceof Rejected ? cause.message : undefined;
    return new KeysetError('invalid_cursor', {
      detail:
        reason === 'expired'
          ? 'The cursor has expired; restart from the first page.'
          : reason === 'signature' && throwaway
            ? // Names no secret: only that this server made its own, which the developer chose.
              'The cursor was not signed by this server for this query. Likely cause: this server signs cursors ' +
              'with a secret it made at start-up (development mode, no cursor secret configured), so a cursor from ' +
              'another instance, or from before a restart, fails here. Give every instance the same CURSOR_SECRET; ' +
              'restart from the first page.'
            : 'The cursor is malformed or was not issued for this query; restart from the first page.',
      cause,
    });
  }

  async function decode(text: string, fingerprint: string, sort: SortSpec): Promise<DecodedCursor> {
    try {
      if (typeof text !== 'string' || text.length > maxLength) throw new Rejected('length');
      const bytes = base64.decode(text);
      if (bytes === undefined) throw new Rejected('base64url');
      if (bytes.length < 1 + 2 + TAG_BYTES) throw new Rejected('too short');
      const version = bytes[0] as number;
      if (version !== VERSION) throw new Rejected('version');
      const payloadBytes = bytes.subarray(1, bytes.length - TAG_BYTES);
      let payload: string;
      try {
        payload = decoder.decode(payloadBytes);
      } catch {
        throw new Rejected('utf-8');
      }
      const { bytes: frame, end } = frameOf(fingerprint, payloadBytes);
      try {
        const input = frame.subarray(0, end);
        // The newest secret first, then the older ones (a rotation).
        const tag = mac(signer, input);
        if (!endsWithTag(bytes, typeof tag === 'string' ? tag : await tag) && !(await signedByOthers(input, bytes))) throw new Rejected('signature');
      } finally {
        giveFrame(frame);
      }
      return read(payload, sort);
    } catch (cause) {
      throw invalid(cause);
    }
  }

  /**
   * Signs and assembles a cursor; its position is checked against `sort` first, unless the
   * caller knows it fits (`sort` undefined). The cursor itself when the MAC answers at once
   * (node:crypto), a promise of it otherwise: no promise and turn per cursor where nothing waits.
   */
  function sign(position: CursorPosition | null, fingerprint: string, direction: CursorDirection, sort: SortSpec | undefined): string | Promise<string> {
    if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`cursor direction must be 'forward' or 'backward'`);
    if (position !== null && sort !== undefined) {
      const mismatch = positionMismatch(sort, position);
      if (mismatch !== undefined) throw new TypeError(mismatch);
    }
    const payload = JSON.stringify({ d: direction === 'forward' ? 'f' : 'b', p: position, t: Math.floor(clock() / 1000) });
    // A frame an error leaves behind is not given back: the next call makes another.
    const frame = frameOf(fingerprint, payload);
    const tag = mac(signer, frame.bytes.subarray(0, frame.end));
    return typeof tag === 'string' ? cursorIn(frame, tag) : tag.then((later) => cursorIn(frame, later));
  }

  /** The cursor in `frame`: version byte, payload, tag. Gives the frame back. */
  function cursorIn({ bytes, at, end }: { bytes: Uint8Array; at: number; end: number }, tag: string): string {
    for (let i = 0; i < TAG_BYTES; i++) bytes[end + i] = tag.charCodeAt(i);
    bytes[at - 1] = VERSION;
    const cursor = base64.encode(bytes.subarray(at - 1, end + TAG_BYTES));
    giveFrame(bytes);
    return cursor;
  }

  async function encode(position: CursorPosition | null, fingerprint: string, sort: SortSpec, direction: CursorDirection = 'forward'): Promise<string> {
    return sign(position, fingerprint, direction, sort);
  }

  return Object.freeze({
    encode,
    decode,
    encodeChecked(position: CursorPosition | null, fingerprint: string, direction: CursorDirection): string | Promise<string> {
      return sign(position, fingerprint, direction, undefined);
    },
  });
}
