/**
 * Cursor properties: decode(encode(x)) = x for arbitrary typed positions; any mutation
 * (character flip, truncation, appended bytes, another secret) is `invalid_cursor`; and
 * arbitrary strings only ever produce `invalid_cursor`, never another exception; on
 * Node's provider, on Web Crypto, and on a provider with no optional members. And the
 * payload is exactly `JSON.stringify({ d, p, t })`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { webCrypto } from '../crypto/crypto.web.ts';
import { isKeysetError } from '../errors.ts';
import { decodeBase64url, utf8Encode } from '../internal/base64url.ts';
import { createCursorCodec, createPaginatorCursorCodec } from './cursor-codec.ts';
import { cursorFingerprint } from './cursor-fingerprint.ts';
import { defineSortSpec } from '../pagination/sort-spec.ts';
import type { CursorPosition, SortKey, SortSpec, SortValue, SortValueType } from '../pagination/types.ts';

const SECRET = 'property-test-secret-property-test-secret';
const OTHER = 'another-secret-another-secret-another-secret';
// The codec takes the provider's base64url and binary-string MAC where it has them: the
// properties hold on Node's provider, on Web Crypto (neither, and asynchronous), and on a
// synchronous provider with neither.
const bare: CryptoProvider = { name: 'bare', sha256: nodeCrypto.sha256, hmacSha256: nodeCrypto.hmacSha256, randomBytes: nodeCrypto.randomBytes, timingSafeEqual: nodeCrypto.timingSafeEqual };
const PROVIDERS: [string, CryptoProvider, number][] = [
  ['node', nodeCrypto, 1],
  ['web', webCrypto, 0.3],
  ['bare', bare, 0.3],
];

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
const timestamp = fc
  .record({
    y: fc.integer({ min: 1, max: 9999 }),
    mo: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 28 }),
    h: fc.integer({ min: 0, max: 23 }),
    mi: fc.integer({ min: 0, max: 59 }),
    s: fc.integer({ min: 0, max: 59 }),
    us: fc.integer({ min: 0, max: 999_999 }),
    iso: fc.boolean(),
  })
  .map(({ y, mo, d, h, mi, s, us, iso }) =>
    iso ? `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}.${pad(us, 6)}Z` : `${pad(y, 4)}-${pad(mo)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(s)}.${pad(us, 6)}+00`,
  );
const VALUES: Record<SortValueType, fc.Arbitrary<SortValue>> = {
  string: fc.string({ maxLength: 30, unit: 'binary' }),
  int: fc.maxSafeInteger(),
  bigint: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  decimal: fc.tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.nat({ max: 999_999 })).map(([i, f]) => `${i}.${pad(f, 6)}`),
  number: fc.double({ noNaN: true, noDefaultInfinity: true }),
  timestamp,
  boolean: fc.boolean(),
};

/** A random sort spec and a position that fits it. */
const specAndPosition: fc.Arbitrary<{ sort: SortSpec; position: SortValue[] }> = fc
  .array(fc.tuple(fc.constantFrom(...(Object.keys(VALUES) as SortValueType[])), fc.boolean()), { minLength: 1, maxLength: 4 })
  .chain((keys) => {
    const sort = defineSortSpec(
      keys.map(([type, nullable], i): SortKey => {
        const last = i === keys.length - 1;
        return { key: `k${i}`, dir: 'asc', type, nullable: nullable && !last ? { nulls: 'first' } : false, unique: last };
      }),
    );
    const values = sort.map((k) => (k.nullable ? fc.option(VALUES[k.type], { nil: null }) : VALUES[k.type]));
    return fc.tuple(...values).map((position) => ({ sort, position }));
  });

async function expectInvalidCursor(promise: Promise<unknown>): Promise<void> {
  const outcome = await promise.then(
    () => 'accepted',
    (err: unknown) => (isKeysetError(err) && err.code === 'invalid_cursor' && err.status === 400 ? 'invalid_cursor' : err),
  );
  expect(outcome).toBe('invalid_cursor');
}

describe.each(PROVIDERS)('cursor codec properties (%s provider)', (_name, crypto, share) => {
  const codec = createCursorCodec({ secrets: [SECRET], crypto });
  const other = createCursorCodec({ secrets: [OTHER], crypto });
  const runs = (n: number): number => Math.ceil(n * share);

  it('decode(encode(x)) = x, direction included', async () => {
    const direction = fc.constantFrom('forward' as const, 'backward' as const);
    await fc.assert(
      fc.asyncProperty(specAndPosition, fc.dictionary(fc.string(), fc.jsonValue()), direction, async ({ sort, position }, filters, dir) => {
        const fp = await cursorFingerprint({ endpoint: 'GET /things', sort, filters });
        const decoded = await codec.decode(await codec.encode(position, fp, sort, dir), fp, sort);
        // -0 travels as 0 (JSON); the two compare equal everywhere.
        expect(decoded).toEqual({ direction: dir, position: position.map((v) => (Object.is(v, -0) ? 0 : v)) });
      }),
      { numRuns: runs(300) },
    );
  });

  it('any mutation of a cursor is invalid_cursor', async () => {
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), by: fc.integer({ min: 1, max: 63 }) }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('append' as const), text: fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom(...'AQgw-_09azAZ') }) }),
      fc.record({ kind: fc.constant('secret' as const) }),
    );
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    await fc.assert(
      fc.asyncProperty(specAndPosition, mutation, async ({ sort, position }, m) => {
        const fp = await cursorFingerprint({ endpoint: 'GET /things', sort });
        const text = await codec.encode(position, fp, sort);
        let mutated: string;
        if (m.kind === 'flip') {
          const at = m.at % text.length;
          mutated = text.slice(0, at) + ALPHABET[(ALPHABET.indexOf(text[at]!) + m.by) % 64] + text.slice(at + 1);
        } else if (m.kind === 'truncate') {
          mutated = text.slice(0, m.at % text.length);
        } else if (m.kind === 'append') {
          mutated = text + m.text;
        } else {
          mutated = await other.encode(position, fp, sort);
        }
        expect(mutated).not.toBe(text);
        await expectInvalidCursor(codec.decode(mutated, fp, sort));
      }),
      { numRuns: runs(500) },
    );
  });

  it('arbitrary input only ever yields invalid_cursor', async () => {
    const sort = defineSortSpec([
      { key: 't', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ]);
    const fp = await cursorFingerprint({ endpoint: 'GET /things', sort });
    const input = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 3000 }),
      fc.base64String({ maxLength: 400 }).map((s) => s.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('base64url')),
      fc.jsonValue().map((v) => Buffer.from(`\u0001${JSON.stringify(v)}0123456789abcdef`).toString('base64url')),
    );
    await fc.assert(
      fc.asyncProperty(input, async (text) => {
        await expectInvalidCursor(codec.decode(text, fp, sort));
      }),
      { numRuns: runs(1000) },
    );
  });
});

describe('cursor payload', () => {
  it('is the UTF-8 of JSON.stringify({ d, p, t }) between the version byte and the 16-byte tag, for any position and time', async () => {
    // Text that needs escapes (quotes, backslashes, control characters, lone surrogates) and text that does not.
    const awkward = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '~', '\u007f', '"', '\\', '\n', '\u0000', '\u001f', 'é', '\u2028', '\ud800', '\udfff', '😀', '\uffff'), maxLength: 8 });
    const value = fc.oneof(fc.string({ unit: 'binary' }), awkward, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('forward' as const, 'backward' as const), fc.option(fc.array(value, { maxLength: 5 }), { nil: null }), fc.nat({ max: 4_000_000_000_000 }), async (direction, position, now) => {
        const paginatorCodec = createPaginatorCursorCodec({ secrets: [SECRET], clock: () => now, maxLength: 100_000 });
        const bytes = decodeBase64url(await paginatorCodec.encodeChecked(position as CursorPosition | null, 'fp', direction))!;
        expect(bytes[0]).toBe(2);
        const payload = utf8Encode(JSON.stringify({ d: direction === 'forward' ? 'f' : 'b', p: position, t: Math.floor(now / 1000) }));
        expect(bytes.subarray(1, bytes.length - 16)).toEqual(payload);
      }),
      { numRuns: 2000 },
    );
  });
});
