import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64url, encodeBase64url } from '../internal/base64url.ts';
import { createNodeCrypto, nodeCrypto } from './crypto.node.ts';
import { webCrypto } from './crypto.web.ts';

const native = nodeCrypto.base64url!;
// Strings near the alphabet, so canonical and almost-canonical inputs both occur often.
const near = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ .%\u00e9'), maxLength: 40 });

describe('node provider base64url', () => {
  it('encodes exactly like the portable codec', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(native.encode(bytes)).toBe(encodeBase64url(bytes));
      }),
    );
  });

  it('accepts and rejects exactly what the strict portable decoder does', () => {
    fc.assert(
      fc.property(near, (text) => {
        const a = native.decode(text);
        const b = decodeBase64url(text);
        expect(a === undefined).toBe(b === undefined);
        if (a !== undefined && b !== undefined) expect(Array.from(a)).toEqual(Array.from(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('encodes any range of a longer array, a Buffer, and an array whose memory it saw before, like the portable codec', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = a % (bytes.length + 1);
        const end = start + (b % (bytes.length - start + 1));
        const range = bytes.subarray(start, end);
        expect(native.encode(range)).toBe(encodeBase64url(range));
        expect(native.encode(range)).toBe(encodeBase64url(range));
        expect(native.encode(Buffer.from(range))).toBe(encodeBase64url(range));
      }),
      { numRuns: 500 },
    );
    // The memory changed between two encodes of the same view: the text follows it.
    const kept = new Uint8Array(8);
    const view = kept.subarray(2, 6);
    const before = native.encode(view);
    kept.fill(7);
    expect(native.encode(view)).not.toBe(before);
    expect(native.encode(view)).toBe(encodeBase64url(view));
    // Views of two memories, and two views of one, in turns: each encodes its own bytes.
    const other = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const views = [view, other.subarray(1, 8), kept.subarray(0, 8), other.subarray(0, 0), other];
    for (let round = 0; round < 3; round++) for (const v of views) expect(native.encode(v)).toBe(encodeBase64url(v));
  });

  it('encodes a view of a resizable ArrayBuffer after the memory grew or shrank, like the portable codec (no throw)', () => {
    // ES2024 (the TypeScript lib here is older): a resizable ArrayBuffer, Node 20+.
    type Resizable = ArrayBuffer & { resize(length: number): void };
    const memory = new (ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => Resizable)(8, { maxByteLength: 64 });
    const all = new Uint8Array(memory);
    const fixed = new Uint8Array(memory, 2, 4);
    all.set([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(native.encode(all)).toBe(encodeBase64url(all));
    expect(native.encode(fixed)).toBe(encodeBase64url(fixed));
    memory.resize(16);
    all.fill(9);
    const later = new Uint8Array(memory, 4, 12);
    for (const v of [all, later, fixed, all]) expect(native.encode(v)).toBe(encodeBase64url(v));
    memory.resize(4);
    for (const v of [all, fixed, later, all]) expect(native.encode(v)).toBe(encodeBase64url(v));
    memory.resize(32);
    for (const v of [all, fixed, later]) expect(native.encode(v)).toBe(encodeBase64url(v));
  });

  it('rejects padding, the standard alphabet and non-zero trailing bits', () => {
    expect(native.decode('QQ==')).toBeUndefined();
    expect(native.decode('a+b/')).toBeUndefined();
    expect(native.decode('QR')).toBeUndefined(); // 'QQ' is the canonical spelling of 0x41
    expect(Array.from(native.decode('QQ')!)).toEqual([0x41]);
  });
});

describe('node and web providers agree', () => {
  it('on SHA-256 and HMAC-SHA256', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.uint8Array({ minLength: 1, maxLength: 64 }), async (data, key) => {
        expect(Array.from(nodeCrypto.sha256(data) as Uint8Array)).toEqual(Array.from(await webCrypto.sha256(data)));
        expect(Array.from(nodeCrypto.hmacSha256(key, data) as Uint8Array)).toEqual(Array.from(await webCrypto.hmacSha256(key, data)));
      }),
      { numRuns: 200 },
    );
  });
});

// RFC 4231 §4: HMAC-SHA256 test cases 1, 2, 6 and 7 (keys and data as hex). The provider
// takes text, so cases 3 and 4 (data 0xdd…/0xcd…, not UTF-8) and 5 (truncated) are left out.
const RFC4231: { key: string; data: string; mac: string }[] = [
  {
    key: '0b'.repeat(20),
    data: Buffer.from('Hi There').toString('hex'),
    mac: 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
  },
  {
    key: Buffer.from('Jefe').toString('hex'),
    data: Buffer.from('what do ya want for nothing?').toString('hex'),
    mac: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  },
  {
    key: 'aa'.repeat(131),
    data: Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First').toString('hex'),
    mac: '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
  },
  {
    key: 'aa'.repeat(131),
    data: Buffer.from(
      'This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.',
    ).toString('hex'),
    mac: '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
  },
];

describe('node provider HMAC-SHA256 (two one-shot hashes over cached pads)', () => {
  it('gives the RFC 4231 test vectors', () => {
    for (const { key, data, mac } of RFC4231) {
      const text = Buffer.from(data, 'hex').toString('utf8');
      expect(Buffer.from(text, 'utf8').toString('hex')).toBe(data);
      expect(Buffer.from(nodeCrypto.hmacSha256(Buffer.from(key, 'hex'), text) as Uint8Array).toString('hex')).toBe(mac);
    }
  });

  it('is bit-identical to createHmac on random keys and messages (long keys, long, non-ASCII and lone-surrogate text)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 200 }),
        fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 100 })),
        (key, data) => {
          const expected = createHmac('sha256', key).update(data, 'utf8').digest('hex');
          expect(Buffer.from(nodeCrypto.hmacSha256(key, data) as Uint8Array).toString('hex')).toBe(expected);
          // Again with the same key object: the cached pads must not carry state between calls.
          expect(Buffer.from(nodeCrypto.hmacSha256(key, data) as Uint8Array).toString('hex')).toBe(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('handles messages past the shared scratch buffer, then short ones again, under one key', () => {
    const key = Buffer.from('a-cursor-secret-of-at-least-32-bytes-long');
    for (const length of [0, 1, 63, 64, 65, 300, 5_000, 70_000, 200_000, 10, 80_000, 3]) {
      const data = 'é€𝄞x'.repeat(length).slice(0, length);
      const got = nodeCrypto.hmacSha256(key, data) as Uint8Array;
      expect(Buffer.from(got).toString('hex')).toBe(createHmac('sha256', key).update(data, 'utf8').digest('hex'));
    }
  });

  it('keeps pads per provider: two providers and one key, in turns, each give createHmac', () => {
    const key = Buffer.from('a-cursor-secret-of-at-least-32-bytes-long');
    const [a, b] = [createNodeCrypto(), createNodeCrypto()];
    for (const data of ['one', 'two'.repeat(200), '', 'é€𝄞']) {
      const expected = createHmac('sha256', key).update(data, 'utf8').digest('binary');
      expect(a.hmacSha256Binary!(key, data)).toBe(expected);
      expect(b.hmacSha256Binary!(key, data)).toBe(expected);
    }
  });

  it('returns a fresh array each call (a caller may keep it)', () => {
    const key = Buffer.from('a-cursor-secret-of-at-least-32-bytes-long');
    const first = nodeCrypto.hmacSha256(key, 'one') as Uint8Array;
    const copy = Buffer.from(first).toString('hex');
    nodeCrypto.hmacSha256(key, 'two');
    expect(Buffer.from(first).toString('hex')).toBe(copy);
  });
});

describe('node provider HMAC over bytes', () => {
  it('hmacSha256BinaryBytes is createHmac over the bytes, for views of longer arrays, any key and length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 100 }), fc.uint8Array({ maxLength: 3000 }), fc.nat(), (key, data, cut) => {
        const view = data.subarray(cut % (data.length + 1));
        const expected = createHmac('sha256', key).update(view).digest('binary');
        expect(nodeCrypto.hmacSha256BinaryBytes!(key, view)).toBe(expected);
        expect(nodeCrypto.hmacSha256BinaryBytes!(key, view)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with the text MAC on UTF-8 bytes, past the shared scratch buffer and back, under one key', () => {
    const key = Buffer.from('a-cursor-secret-of-at-least-32-bytes-long');
    for (const length of [0, 1, 63, 64, 65, 300, 2_000, 2_049, 70_000, 200_000, 10, 80_000, 3, 2_048]) {
      const data = 'é€𝄞x'.repeat(length).slice(0, length);
      expect(nodeCrypto.hmacSha256BinaryBytes!(key, Buffer.from(data, 'utf8'))).toBe(nodeCrypto.hmacSha256Binary!(key, data));
      expect(nodeCrypto.hmacSha256Binary!(key, data)).toBe(createHmac('sha256', key).update(data, 'utf8').digest('binary'));
    }
  });
});

describe('node provider binary-string digests', () => {
  it('sha256Binary and hmacSha256Binary are sha256 and hmacSha256, one character per byte', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.string({ unit: 'binary', maxLength: 200 }), (key, data) => {
        expect(nodeCrypto.sha256Binary!(data)).toBe(String.fromCharCode(...(nodeCrypto.sha256(data) as Uint8Array)));
        expect(nodeCrypto.hmacSha256Binary!(key, data)).toBe(String.fromCharCode(...(nodeCrypto.hmacSha256(key, data) as Uint8Array)));
      }),
      { numRuns: 150 },
    );
  });
});
