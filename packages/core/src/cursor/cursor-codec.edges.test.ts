/**
 * The exact edges of the cursor codec: the reason (`cause`) of each refusal, which an
 * operator reads in the logs, at the boundary that triggers it (length, the shortest
 * frame, UTF-8, a byte-order mark, the payload's shape member by member, the issue time
 * at 0); the longest cursor that `maxLength` lets through, both ways; a long fingerprint;
 * the third of three secrets; and many cursors encoded and decoded at once through the
 * codec's one shared frame. The mutation run over `cursor-codec.ts` (docs/security.md,
 * "Mutation testing") found these unpinned.
 */
import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { webCrypto } from '../crypto/crypto.web.ts';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { KeysetError } from '../errors.ts';
import { encodeBase64url } from '../internal/base64url.ts';
import { createCursorCodec } from './cursor-codec.ts';
import { defineSortSpec } from '../pagination/sort-spec.ts';

const SECRET = 'edges-secret-edges-secret-edges-0';
const OTHER = 'other-secret-other-secret-other-1';
const THIRD = 'third-secret-third-secret-third-2';
const sort = defineSortSpec([
  { key: 'name', dir: 'asc', type: 'string' },
  { key: 'id', dir: 'asc', type: 'int', unique: true },
]);
const fp = 'fp-edges';
const T = 1_714_557_600;
const clock = (): number => T * 1000;

/** A cursor of `version` over the exact `payload` bytes, signed with `secret` as the codec would. */
function forged(payload: Uint8Array | string, { version = 2, secret = SECRET, fingerprint = fp, tag }: { version?: number; secret?: string; fingerprint?: string; tag?: Uint8Array } = {}): string {
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  const prefix = new TextEncoder().encode(`keyset-cursor\u0000${version}\u0000${fingerprint}\u0000`);
  const input = new Uint8Array(prefix.length + body.length);
  input.set(prefix);
  input.set(body, prefix.length);
  const mac = tag ?? new Uint8Array([...nodeCrypto.hmacSha256BinaryBytes!(new TextEncoder().encode(secret), input)].map((c) => c.charCodeAt(0))).subarray(0, 16);
  const bytes = new Uint8Array(1 + body.length + 16);
  bytes[0] = version;
  bytes.set(body, 1);
  bytes.set(mac, 1 + body.length);
  return encodeBase64url(bytes);
}

/** The reason a decode was refused: its `invalid_cursor` error's cause message. */
async function causeOf(promise: Promise<unknown>): Promise<string> {
  const error = await rejectionOf(promise, KeysetError);
  expect(error).toMatchObject({ status: 400, code: 'invalid_cursor', detail: 'The cursor is malformed or was not issued for this query; restart from the first page.' });
  return (error.cause as Error).message;
}

describe('cursor codec: the reason of each refusal, at its boundary', () => {
  const codec = createCursorCodec({ secrets: [SECRET], clock, maxLength: 64 });

  it('length: over maxLength, or not a string; exactly maxLength is read', async () => {
    expect(await causeOf(codec.decode('A'.repeat(65), fp, sort))).toBe('length');
    expect(await causeOf(codec.decode(42 as never, fp, sort))).toBe('length');
    expect(await causeOf(codec.decode('A'.repeat(64), fp, sort))).toBe('version');
  });

  it('base64url, then too short: fewer than 19 bytes (version, two payload bytes, the tag)', async () => {
    expect(await causeOf(codec.decode('not base64url!', fp, sort))).toBe('base64url');
    expect(await causeOf(codec.decode(encodeBase64url(new Uint8Array(18).fill(2)), fp, sort))).toBe('too short');
    // 19 bytes, well signed: read as far as its shape.
    expect(await causeOf(codec.decode(forged('{}'), fp, sort))).toBe('shape');
  });

  it('utf-8: a payload that is not UTF-8 is refused as such, before its tag is looked at', async () => {
    expect(await causeOf(codec.decode(forged(new Uint8Array([0x7b, 0xff, 0x7d])), fp, sort))).toBe('utf-8');
    expect(await causeOf(codec.decode(forged(new Uint8Array([0x7b, 0xff, 0x7d]), { tag: new Uint8Array(16) }), fp, sort))).toBe('utf-8');
  });

  it('signature: a wrong tag, another fingerprint, another secret', async () => {
    const codec = createCursorCodec({ secrets: [SECRET], clock });
    const payload = JSON.stringify({ d: 'f', p: null, t: T });
    expect(await codec.decode(forged(payload), fp, sort)).toEqual({ direction: 'forward', position: null });
    expect(await causeOf(codec.decode(forged(payload, { tag: new Uint8Array(16) }), fp, sort))).toBe('signature');
    expect(await causeOf(codec.decode(forged(payload), 'fp-other', sort))).toBe('signature');
    expect(await causeOf(codec.decode(forged(payload, { secret: OTHER }), fp, sort))).toBe('signature');
  });

  it('a byte-order mark before the JSON is part of the payload: well signed, still refused', async () => {
    const withBom = `\uFEFF${JSON.stringify({ d: 'f', p: null, t: T })}`;
    const error = await codec.decode(forged(withBom), fp, sort).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 400, code: 'invalid_cursor' });
  });

  it('shape: every member checked, the issue time a whole number from 0', async () => {
    const shaped = async (payload: unknown): Promise<string> => {
      const text = forged(JSON.stringify(payload));
      return createCursorCodec({ secrets: [SECRET], clock }).decode(text, fp, sort).then(
        () => 'accepted',
        (e: unknown) => ((e as KeysetError).cause as Error).message,
      );
    };
    expect(await shaped({ d: 'f', p: null, t: 0 })).toBe('accepted');
    expect(await shaped({ d: 'b', p: ['a', 1], t: T })).toBe('accepted');
    for (const bad of [
      null,
      [],
      ['f', null, T],
      12345,
      'f',
      { d: 'f', p: null, t: -1 },
      { d: 'f', p: null, t: 1.5 },
      { d: 'f', p: null, t: String(T) },
      { d: 'f', p: null },
      { d: 'f', p: null, t: T, x: 1 },
      { p: null, t: T, x: 'f' },
      { d: 'x', p: null, t: T },
      { d: 'F', p: null, t: T },
      { d: 'f', p: {}, t: T },
      { d: 'f', p: 'a', t: T },
      { d: 'f', t: T, q: null },
    ]) {
      expect(await shaped(bad), JSON.stringify(bad)).toBe('shape');
    }
    expect(await shaped({ d: 'f', p: ['a'], t: T })).toBe('arity');
    expect(await shaped({ d: 'f', p: ['a', 1, 2], t: T })).toBe('arity');
    expect(await shaped({ d: 'f', p: [1, 1], t: T })).toBe('type of name');
    expect(await shaped({ d: 'f', p: ['a', 'b'], t: T })).toBe('type of id');
  });

  it('expired says so in its detail; the issue time ahead of the clock skew is "future"', async () => {
    const text = forged(JSON.stringify({ d: 'f', p: null, t: T }));
    const late = createCursorCodec({ secrets: [SECRET], ttlSeconds: 10, clock: () => (T + 11) * 1000 });
    const error = await late.decode(text, fp, sort).then(
      () => undefined,
      (e: unknown) => e as KeysetError,
    );
    expect(error).toMatchObject({ code: 'invalid_cursor', detail: 'The cursor has expired; restart from the first page.' });
    expect((error!.cause as Error).message).toBe('expired');
    expect(await createCursorCodec({ secrets: [SECRET], ttlSeconds: 10, clock: () => (T + 10) * 1000 }).decode(text, fp, sort)).toEqual({ direction: 'forward', position: null });
    expect(await causeOf(createCursorCodec({ secrets: [SECRET], clock: () => (T - 61) * 1000 }).decode(text, fp, sort))).toBe('future');
  });
});

describe('cursor codec: maxLength both ways', () => {
  // With maxLength 2048 the frame holds 1536 bytes: version, payload, 16-byte tag, so a
  // payload of 1519 bytes makes a cursor of exactly 2048 characters.
  const codec = createCursorCodec({ secrets: [SECRET], clock });
  const payloadOf = (name: string): string => JSON.stringify({ d: 'f', p: [name, 1], t: T });
  const overhead = payloadOf('').length;

  it('encodes and decodes the longest cursor allowed; one byte more is a TypeError naming the length', async () => {
    const longest = 'n'.repeat(1519 - overhead);
    const text = await codec.encode([longest, 1], fp, sort);
    expect(text).toHaveLength(2048);
    expect(await codec.decode(text, fp, sort)).toEqual({ direction: 'forward', position: [longest, 1] });
    await expect(codec.encode([`${longest}n`, 1], fp, sort)).rejects.toThrow(
      new TypeError('cursor would be 2050 characters, over maxLength 2048; shorten the sort values or raise cursor.maxLength'),
    );
  });

  it('the longest cursor under a long fingerprint: the frame grows to hold both', async () => {
    const longest = 'n'.repeat(1519 - overhead);
    for (const fingerprint of ['g'.repeat(600), 'é'.repeat(600)]) {
      const text = await codec.encode([longest, 1], fingerprint, sort);
      expect(text).toHaveLength(2048);
      expect(await codec.decode(text, fingerprint, sort)).toEqual({ direction: 'forward', position: [longest, 1] });
    }
  });

  it('fingerprints longer than the first frame are signed whole: two that differ only at the end do not share cursors', async () => {
    const a = `${'h'.repeat(3000)}a`;
    const b = `${'h'.repeat(3000)}b`;
    const text = await codec.encode(['a', 1], a, sort);
    expect(await codec.decode(text, a, sort)).toEqual({ direction: 'forward', position: ['a', 1] });
    expect(await causeOf(codec.decode(text, b, sort))).toBe('signature');
  });

  it('a fingerprint longer than the frame was made for', async () => {
    const long = 'f'.repeat(1500);
    const text = await codec.encode(['a', 1], long, sort);
    expect(await codec.decode(text, long, sort)).toEqual({ direction: 'forward', position: ['a', 1] });
    expect(await causeOf(codec.decode(text, long.slice(1), sort))).toBe('signature');
    // And back to a short one.
    expect(await codec.decode(await codec.encode(['b', 2], fp, sort), fp, sort)).toEqual({ direction: 'forward', position: ['b', 2] });
  });
});

describe('cursor codec: what it tells a developer, and a provider that misbehaves', () => {
  it('names itself for an unknown option, and the two directions for a wrong one', async () => {
    expect(() => createCursorCodec({ secrets: [SECRET], ttl: 60 } as never)).toThrow(/^createCursorCodec: /);
    await expect(createCursorCodec({ secrets: [SECRET] }).encode(['a', 1], fp, sort, 'up' as never)).rejects.toThrow(
      new TypeError("cursor direction must be 'forward' or 'backward'"),
    );
  });

  it('a provider whose MAC comes back short verifies nothing, not even a tag of zeros', async () => {
    const short = { ...nodeCrypto, hmacSha256BinaryBytes: (): string => '' };
    const codec = createCursorCodec({ secrets: [SECRET], clock, crypto: short });
    const zeros = forged(JSON.stringify({ d: 'f', p: null, t: T }), { tag: new Uint8Array(16) });
    expect(await causeOf(codec.decode(zeros, fp, sort))).toBe('signature');
  });
});

describe('cursor codec: several secrets and many cursors at once', () => {
  it('accepts a cursor signed by any secret, the third of three included', async () => {
    const rotating = createCursorCodec({ secrets: [SECRET, OTHER, THIRD], clock });
    for (const secret of [SECRET, OTHER, THIRD]) {
      const text = await createCursorCodec({ secrets: [secret], clock }).encode(['a', 1], fp, sort);
      expect(await rotating.decode(text, fp, sort), secret).toEqual({ direction: 'forward', position: ['a', 1] });
    }
    const unknown = await createCursorCodec({ secrets: ['unknown-secret-unknown-secret-unk-3'], clock }).encode(['a', 1], fp, sort);
    expect(await causeOf(rotating.decode(unknown, fp, sort))).toBe('signature');
  });

  it.each([
    ['node:crypto', nodeCrypto],
    ['Web Crypto', webCrypto],
  ])('%s: cursors encoded and decoded at once, under different fingerprints and secrets, each round-trips', async (_name, crypto) => {
    const codec = createCursorCodec({ secrets: [SECRET, OTHER], clock, crypto });
    const old = createCursorCodec({ secrets: [OTHER], clock, crypto });
    const cases = Array.from({ length: 24 }, (_, i) => ({ position: [`name ${i}`.repeat(1 + (i % 5)), i] as [string, number], fingerprint: `fp-${i % 3 === 0 ? 'x'.repeat(200 + i) : i}` }));
    const mine = await Promise.all(cases.map(({ position, fingerprint }) => codec.encode(position, fingerprint, sort)));
    const theirs = await Promise.all(cases.map(({ position, fingerprint }) => old.encode(position, fingerprint, sort)));
    for (const [i, { position, fingerprint }] of cases.entries()) {
      expect(mine[i]).toBe(await codec.encode(position, fingerprint, sort));
    }
    const decoded = await Promise.all([...mine, ...theirs].map((text, i) => codec.decode(text, cases[i % cases.length]!.fingerprint, sort)));
    expect(decoded).toEqual([...cases, ...cases].map(({ position }) => ({ direction: 'forward', position })));
  });
});
