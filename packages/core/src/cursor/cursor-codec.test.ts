import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { webCrypto } from '../crypto/crypto.web.ts';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { decodeBase64url, encodeBase64url, utf8Decode, utf8Encode } from '../internal/base64url.ts';
import { createCursorCodec } from './cursor-codec.ts';
import { cursorFingerprint } from './cursor-fingerprint.ts';
import { defineSortSpec } from '../pagination/sort-spec.ts';
import type { CursorPosition } from '../pagination/types.ts';

const OLD = 'old-secret-old-secret-old-secret-0';
const NEW = new TextEncoder().encode('new-secret-new-secret-new-secret-1');
const sort = defineSortSpec([
  { key: 'createdAt', dir: 'desc', type: 'timestamp' },
  { key: 'score', dir: 'asc', type: 'decimal', nullable: { nulls: 'last' } },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
]);
const position: CursorPosition = ['2024-05-01 10:00:00.123456+00', null, '9007199254740993'];
const fp = await cursorFingerprint({ endpoint: 'GET /api/orders', sort, filters: { status: 'paid' } });
const forward = { direction: 'forward', position };

/** The tag a cursor of `version` would carry, computed independently of the codec. */
function taggedAs(version: number, payload: string): Uint8Array {
  const mac = nodeCrypto.hmacSha256(new TextEncoder().encode(OLD), `keyset-cursor\u0000${version}\u0000${fp}\u0000${payload}`) as Uint8Array;
  return mac.subarray(0, 16);
}

async function refused(promise: Promise<unknown>): Promise<KeysetError> {
  const err = await rejectionOf(promise, KeysetError);
  expect(err).toMatchObject({ status: 400, code: 'invalid_cursor' });
  return err;
}

describe('createCursorCodec', () => {
  it('round-trips a position, losslessly', async () => {
    const codec = createCursorCodec({ secrets: [OLD] });
    const text = await codec.encode(position, fp, sort);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(await codec.decode(text, fp, sort)).toEqual(forward);
  });

  it('is a versioned JSON payload with a 16-byte tag', async () => {
    const codec = createCursorCodec({ secrets: [OLD], clock: () => 1_714_557_600_000 });
    const bytes = decodeBase64url(await codec.encode(position, fp, sort))!;
    expect(bytes[0]).toBe(2);
    expect(JSON.parse(utf8Decode(bytes.subarray(1, bytes.length - 16))!)).toEqual({ d: 'f', p: position, t: 1_714_557_600 });
  });

  it('carries the direction, and null positions for the start and the end', async () => {
    const codec = createCursorCodec({ secrets: [OLD] });
    const back = await codec.encode(position, fp, sort, 'backward');
    expect(await codec.decode(back, fp, sort)).toEqual({ direction: 'backward', position });
    expect(await codec.decode(await codec.encode(null, fp, sort), fp, sort)).toEqual({ direction: 'forward', position: null });
    expect(await codec.decode(await codec.encode(null, fp, sort, 'backward'), fp, sort)).toEqual({ direction: 'backward', position: null });
    // The direction is signed: turning a backward cursor into a forward one breaks the tag.
    const bytes = decodeBase64url(back)!;
    const body = utf8Decode(bytes.subarray(1, bytes.length - 16))!;
    const turned = utf8Encode(body.replace('"d":"b"', '"d":"f"'));
    const edited = new Uint8Array(1 + turned.length + 16);
    edited[0] = 2;
    edited.set(turned, 1);
    edited.set(bytes.subarray(bytes.length - 16), 1 + turned.length);
    await refused(codec.decode(encodeBase64url(edited), fp, sort));
    await expect(codec.encode(position, fp, sort, 'sideways' as 'forward')).rejects.toThrow(TypeError);
  });

  it('refuses any version but 2, even one signed with a current secret', async () => {
    // No release issued another version: a well-signed cursor of version 1 (the forward-only
    // draft's shape, `{"p":[...],"t":…}`) or 3 is malformed like any other.
    const codec = createCursorCodec({ secrets: [OLD] });
    for (const [version, payload] of [
      [1, JSON.stringify({ p: position, t: 1_714_557_600 })],
      [1, JSON.stringify({ d: 'f', p: position, t: 1_714_557_600 })],
      [3, JSON.stringify({ d: 'f', p: position, t: 1_714_557_600 })],
    ] as const) {
      const tag = taggedAs(version, payload);
      const body = utf8Encode(payload);
      const cursor = new Uint8Array(1 + body.length + 16);
      cursor[0] = version;
      cursor.set(body, 1);
      cursor.set(tag, 1 + body.length);
      const err = await refused(codec.decode(encodeBase64url(cursor), fp, sort));
      expect((err.cause as Error).message).toBe('version');
    }
  });

  it('refuses a cursor for other filters, another endpoint or another sort spec', async () => {
    const codec = createCursorCodec({ secrets: [OLD] });
    const text = await codec.encode(position, fp, sort);
    const otherFilters = await cursorFingerprint({ endpoint: 'GET /api/orders', sort, filters: { status: 'open' } });
    const otherEndpoint = await cursorFingerprint({ endpoint: 'GET /api/keys', sort, filters: { status: 'paid' } });
    const otherSort = defineSortSpec(sort.map((k, i) => (i === 0 ? { ...k, dir: 'asc' as const } : k)));
    const otherSortFp = await cursorFingerprint({ endpoint: 'GET /api/orders', sort: otherSort, filters: { status: 'paid' } });
    await refused(codec.decode(text, otherFilters, sort));
    await refused(codec.decode(text, otherEndpoint, sort));
    await refused(codec.decode(text, otherSortFp, otherSort));
  });

  it('binds filters canonically: key order does not matter, types do', async () => {
    const scope = { endpoint: 'e', sort };
    const a = await cursorFingerprint({ ...scope, filters: { a: 1, b: [1, 'x'], c: undefined } });
    expect(await cursorFingerprint({ ...scope, filters: { b: [1, 'x'], a: 1 } })).toBe(a);
    expect(await cursorFingerprint({ ...scope, filters: { a: '1', b: [1, 'x'] } })).not.toBe(a);
    expect(await cursorFingerprint({ ...scope, filters: { n: 5n } })).not.toBe(await cursorFingerprint({ ...scope, filters: { n: '5n' } }));
    expect(await cursorFingerprint({ ...scope })).toBe(await cursorFingerprint({ ...scope, filters: {} }));
  });

  it('rotates secrets: sign with the first, verify with any', async () => {
    const before = createCursorCodec({ secrets: [OLD] });
    const during = createCursorCodec({ secrets: [NEW, OLD] });
    const after = createCursorCodec({ secrets: [NEW] });
    const oldCursor = await before.encode(position, fp, sort);
    expect(await during.decode(oldCursor, fp, sort)).toEqual(forward);
    const newCursor = await during.encode(position, fp, sort);
    expect(await after.decode(newCursor, fp, sort)).toEqual(forward);
    await refused(after.decode(oldCursor, fp, sort));
    await refused(before.decode(newCursor, fp, sort));
  });

  it('expires cursors after ttlSeconds', async () => {
    let now = 1_714_557_600_000;
    const codec = createCursorCodec({ secrets: [OLD], ttlSeconds: 60, clock: () => now });
    const text = await codec.encode(position, fp, sort);
    now += 60_000;
    expect(await codec.decode(text, fp, sort)).toEqual(forward);
    now += 1_000;
    const err = await refused(codec.decode(text, fp, sort));
    expect(err.detail).toMatch(/expired/);
    // Without a TTL the same cursor never expires.
    expect(await createCursorCodec({ secrets: [OLD], clock: () => now + 1e12 }).decode(text, fp, sort)).toEqual(forward);
  });

  it('refuses a cursor issued further in the future than the clock skew allowance (60 s by default)', async () => {
    const issuedAt = 1_714_557_600_000;
    // An instance whose clock runs ahead issues a cursor; this one reads it.
    const text = await createCursorCodec({ secrets: [OLD], clock: () => issuedAt }).encode(position, fp, sort);
    const readAt = (now: number, options: { ttlSeconds?: number; clockSkewSeconds?: number } = {}) =>
      createCursorCodec({ secrets: [OLD], clock: () => now, ...options }).decode(text, fp, sort);
    expect(await readAt(issuedAt - 60_000)).toEqual(forward);
    const err = await refused(readAt(issuedAt - 60_001));
    expect((err.cause as Error).message).toBe('future');
    expect(err.detail).toMatch(/malformed or was not issued/);
    // With a TTL as without one: a cursor from the future would otherwise outlive it.
    await refused(readAt(issuedAt - 3_600_000, { ttlSeconds: 60 }));
    // The allowance is configurable, down to none.
    expect(await readAt(issuedAt - 300_000, { clockSkewSeconds: 300 })).toEqual(forward);
    await refused(readAt(issuedAt - 300_001, { clockSkewSeconds: 300 }));
    expect(await readAt(issuedAt, { clockSkewSeconds: 0 })).toEqual(forward);
    await refused(readAt(issuedAt - 1_000, { clockSkewSeconds: 0 }));
  });

  it('works with the Web Crypto provider too, and both providers agree', async () => {
    const web = createCursorCodec({ secrets: [OLD], crypto: webCrypto, clock: () => 0 });
    const node = createCursorCodec({ secrets: [OLD], clock: () => 0 });
    const text = await web.encode(position, fp, sort);
    expect(text).toBe(await node.encode(position, fp, sort));
    expect(await web.decode(text, fp, sort)).toEqual(forward);
  });

  it('keeps cursors apart while Web Crypto MACs are pending: the codec reuses one frame', async () => {
    // Encodes and decodes under several fingerprints and secrets, all in flight at once,
    // each checked against the synchronous node provider's answer.
    const secrets = [NEW, OLD];
    const web = createCursorCodec({ secrets, crypto: webCrypto, clock: () => 0 });
    const node = createCursorCodec({ secrets, clock: () => 0 });
    const oldOnly = createCursorCodec({ secrets: [OLD], clock: () => 0 });
    const fps = await Promise.all(['a', 'b', 'c'].map((status) => cursorFingerprint({ endpoint: 'GET /api/orders', sort, filters: { status } })));
    const positions: CursorPosition[] = fps.map((_, i) => [`2024-05-0${i + 1} 10:00:00+00`, null, String(i)]);
    const expected = await Promise.all(fps.map((f, i) => node.encode(positions[i]!, f, sort)));
    expect(await Promise.all(fps.map((f, i) => web.encode(positions[i]!, f, sort)))).toEqual(expected);
    // Old-secret cursors make the web codec try a second secret after its first MAC settles.
    const underOld = await Promise.all(fps.map((f, i) => oldOnly.encode(positions[i]!, f, sort)));
    const decoded = await Promise.all([...expected, ...underOld].map((text, i) => web.decode(text, fps[i % 3]!, sort)));
    expect(decoded.map((d) => d.position)).toEqual([...positions, ...positions]);
    await Promise.all(expected.map((text, i) => refused(web.decode(text, fps[(i + 1) % 3]!, sort))));
  });

  it('re-validates value types against the sort spec even under a valid signature', async () => {
    // A signed payload whose values no longer fit the spec (e.g. the spec changed, same fingerprint).
    const loose = defineSortSpec([
      { key: 'createdAt', dir: 'desc', type: 'string' },
      { key: 'score', dir: 'asc', type: 'string', nullable: { nulls: 'last' } },
      { key: 'id', dir: 'desc', type: 'string', unique: true },
    ]);
    const codec = createCursorCodec({ secrets: [OLD] });
    for (const bad of [
      ['yesterday', null, '1'],
      ['2024-02-30 10:00:00+00', null, '1'],
      ['2024-05-01 10:00:00+00', '1e5', '1'],
      ['2024-05-01 10:00:00+00', null, '01'],
      ['2024-05-01 10:00:00+00', null, '-0'],
      ['2024-05-01 10:00:00+00', null, '1.5'],
    ]) {
      await refused(codec.decode(await codec.encode(bad, fp, loose), fp, sort));
    }
    const ints = defineSortSpec([{ key: 'n', dir: 'asc', type: 'int', unique: true }]);
    const nums = defineSortSpec([{ key: 'n', dir: 'asc', type: 'number', unique: true }]);
    await refused(codec.decode(await codec.encode([2 ** 53], fp, nums), fp, ints));
    await refused(codec.decode(await codec.encode([1.5], fp, nums), fp, ints));
    // A null for a non-null key, and the wrong number of values.
    const nullable = defineSortSpec([{ key: 'a', dir: 'asc', type: 'int', nullable: { nulls: 'first' } }, { key: 'id', dir: 'asc', type: 'int', unique: true }]);
    const strict = defineSortSpec([{ key: 'a', dir: 'asc', type: 'int' }, { key: 'id', dir: 'asc', type: 'int', unique: true }]);
    await refused(codec.decode(await codec.encode([null, 1], fp, nullable), fp, strict));
    await refused(codec.decode(await codec.encode([1], fp, ints), fp, strict));
  });

  it('refuses a hand-made cursor with a valid structure but no valid tag', async () => {
    const codec = createCursorCodec({ secrets: [OLD] });
    const payload = utf8Encode(JSON.stringify({ p: position, t: 0 }));
    const forged = new Uint8Array(1 + payload.length + 16);
    forged[0] = 1;
    forged.set(payload, 1);
    await refused(codec.decode(encodeBase64url(forged), fp, sort));
  });

  it('refuses oversized and non-string input without work', async () => {
    const codec = createCursorCodec({ secrets: [OLD] });
    await refused(codec.decode('A'.repeat(2049), fp, sort));
    await refused(codec.decode(undefined as unknown as string, fp, sort));
    await refused(codec.decode('', fp, sort));
  });

  it('refuses to encode a position that does not fit the spec, or one too long to decode later', async () => {
    const codec = createCursorCodec({ secrets: [OLD], maxLength: 64 });
    await expect(codec.encode(['x', null, '1'], fp, sort)).rejects.toThrow(TypeError);
    await expect(codec.encode(position, fp, sort)).rejects.toThrow(/maxLength/);
  });

  it.each([
    [{ secrets: [] }, /non-empty/],
    [{ secrets: ['short'] }, /at least 32/],
    [{ secrets: [OLD, new Uint8Array(31)] }, /secrets\[1\] is 31 bytes/],
    [{ secrets: [42 as unknown as string] }, /string or a Uint8Array/],
    [{ secrets: [OLD], ttlSeconds: 0 }, /ttlSeconds/],
    [{ secrets: [OLD], ttlSeconds: Number.POSITIVE_INFINITY }, /ttlSeconds/],
    [{ secrets: [OLD], maxLength: 10 }, /maxLength/],
    [{ secrets: [OLD], clockSkewSeconds: -1 }, /clockSkewSeconds/],
    [{ secrets: [OLD], clockSkewSeconds: Number.NaN }, /clockSkewSeconds/],
    [{ secrets: [OLD], clockSkewSeconds: Number.POSITIVE_INFINITY }, /clockSkewSeconds/],
    [{ secrets: [OLD], clockSkewSeconds: '60' as unknown as number }, /clockSkewSeconds/],
  ])('refuses bad options %# with ConfigError', (options, message) => {
    expect(() => createCursorCodec(options)).toThrow(ConfigError);
    expect(() => createCursorCodec(options)).toThrow(message);
  });

  it('copies byte secrets, so later mutation by the caller does not change verification', async () => {
    const bytes = new Uint8Array(32).fill(7);
    const codec = createCursorCodec({ secrets: [bytes] });
    const text = await codec.encode(position, fp, sort);
    bytes.fill(8);
    expect(await codec.decode(text, fp, sort)).toEqual(forward);
  });
});

describe('codec.encode with a position that does not fit the sort spec', () => {
  const codec = createCursorCodec({ secrets: [OLD] });
  const intSort = defineSortSpec([
    { key: 'createdAt', dir: 'desc', type: 'timestamp' },
    { key: 'id', dir: 'desc', type: 'int', unique: true },
  ]);
  const encodeError = (p: readonly unknown[], s = intSort): Promise<unknown> =>
    codec.encode(p as CursorPosition, fp, s).then(
      () => undefined,
      (e: unknown) => e,
    );

  it('names the key, the expected cursor form and the type it got', async () => {
    const error = await encodeError(['2024-05-01 10:00:00.123456+00', '42']);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      'cursor position[1], sort key "id" (type int), must be a safe-integer number (e.g. 42); got string "42"',
    );
    expect(((await encodeError([new Date(), 42])) as Error).message).toBe(
      'cursor position[0], sort key "createdAt" (type timestamp), must be timestamp text (e.g. "2024-05-01 10:00:00.123456+00"); got a Date',
    );
    expect(((await encodeError(['2024-05-01 10:00:00.123456+00', 'x', 9n], sort)) as Error).message).toBe(
      'cursor position[1], sort key "score" (type decimal), must be decimal text (e.g. "12.50") or null; got string "x"',
    );
  });

  it('says how many values the sort spec needs', async () => {
    expect(((await encodeError([42])) as Error).message).toBe(
      'cursor position has 1 value; the sort spec has 2 keys ("createdAt", "id"), one value per key',
    );
  });

  it('encodes the JSDoc example as written', async () => {
    const text = await codec.encode(['2024-05-01 10:00:00.123456+00', 42], fp, intSort);
    expect(await codec.decode(text, fp, intSort)).toEqual({ direction: 'forward', position: ['2024-05-01 10:00:00.123456+00', 42] });
  });
});
