/**
 * CIDR matching, by property: an address is inside a block exactly when its first
 * `bits` bits equal the network's, whatever notation either was written in.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cidrContains, parseCidr } from './cidr.ts';
import { formatIp, isIpv4Mapped, parseIp } from './ip-address.ts';

const RUNS = { numRuns: 300 };
const bytes16 = fc.uint8Array({ minLength: 16, maxLength: 16 });
const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));

function bitAt(b: Uint8Array, i: number): number {
  return (b[i >> 3]! >> (7 - (i & 7))) & 1;
}
function flip(b: Uint8Array, i: number): Uint8Array {
  const out = b.slice();
  out[i >> 3]! ^= 1 << (7 - (i & 7));
  return out;
}
/** The block of `bits` around `address`, written as text the parser must accept. */
function blockText(address: Uint8Array, bits: number): string {
  const network = address.slice();
  for (let i = bits; i < 128; i++) if (bitAt(network, i)) network[i >> 3]! ^= 1 << (7 - (i & 7));
  if (isIpv4Mapped(network) && bits >= 96) return `${formatIp(network)}/${bits - 96}`;
  return `${formatIp(network)}/${bits}`;
}

describe('IP text round-trips', () => {
  it('formatIp output parses back to the same 16 bytes (RFC 5952 text is canonical)', () => {
    fc.assert(
      fc.property(bytes16, (b) => {
        const text = formatIp(b);
        expect(parseIp(text)).toEqual(b);
        expect(formatIp(parseIp(text)!)).toBe(text);
      }),
      RUNS,
    );
  });

  it('an IPv4 address and its IPv4-mapped IPv6 spellings are one address', () => {
    fc.assert(
      fc.property(ipv4, (v4) => {
        expect(parseIp(`::ffff:${v4}`)).toEqual(parseIp(v4));
        expect(parseIp(`0:0:0:0:0:ffff:${v4}`)).toEqual(parseIp(v4));
        expect(formatIp(parseIp(`::FFFF:${v4}`)!)).toBe(v4);
      }),
      RUNS,
    );
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-fA-F:.%/[\]]{0,50}$/)), (s) => {
        parseIp(s);
        parseCidr(s);
      }),
      { numRuns: 500 },
    );
  });
});

describe('CIDR membership', () => {
  it('a block contains an address exactly when their first `bits` bits agree', () => {
    fc.assert(
      fc.property(bytes16, fc.integer({ min: 0, max: 128 }), fc.integer({ min: 0, max: 127 }), (address, bits, bit) => {
        const parsed = parseCidr(blockText(address, bits));
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(parsed.cidr.bits).toBe(bits);
        expect(cidrContains(parsed.cidr, address)).toBe(true);
        // Changing one bit inside the prefix leaves the block; outside it stays in.
        expect(cidrContains(parsed.cidr, flip(address, bit))).toBe(bit >= bits);
      }),
      RUNS,
    );
  });

  it('IPv4 blocks: a.b.c.d/n contains x exactly when the top n bits of both agree, in either notation of x', () => {
    fc.assert(
      fc.property(fc.nat(0xffffffff), fc.nat(0xffffffff), fc.integer({ min: 0, max: 32 }), (net, x, n) => {
        const mask = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
        const dotted = (v: number): string => [24, 16, 8, 0].map((s) => (v >>> s) & 255).join('.');
        const parsed = parseCidr(`${dotted((net & mask) >>> 0)}/${n}`);
        if (!parsed.ok) throw new Error(parsed.reason);
        const inside = ((net ^ x) & mask) >>> 0 === 0;
        expect(cidrContains(parsed.cidr, parseIp(dotted(x))!)).toBe(inside);
        expect(cidrContains(parsed.cidr, parseIp(`::ffff:${dotted(x)}`)!)).toBe(inside);
      }),
      RUNS,
    );
  });

  it('refuses a block with host bits set, and canonical text is stable', () => {
    fc.assert(
      fc.property(bytes16, fc.integer({ min: 0, max: 127 }), (address, bits) => {
        // Make sure some host bit is set.
        const withHost = bitAt(address, 127) ? address : flip(address, 127);
        const text = `${formatIp(withHost)}/${bits}`;
        const parsed = parseCidr(text);
        if (isIpv4Mapped(withHost)) return; // dotted text: /n counts IPv4 bits, covered above
        expect(parsed.ok).toBe(false);
        const clean = parseCidr(blockText(withHost, bits));
        expect(clean.ok && parseCidr(clean.cidr.text)).toEqual(clean);
      }),
      RUNS,
    );
  });
});
