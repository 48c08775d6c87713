/**
 * CIDR blocks (RFC 4632 for IPv4, RFC 4291 §2.3 for IPv6): parsing with a reason on
 * failure, canonical text, and membership. An IPv4 block is held as its IPv4-mapped IPv6
 * block (`10.0.0.0/8` = `::ffff:10.0.0.0/104`), so it matches an IPv4 peer however the
 * socket reports it.
 * @module
 */
import { formatIp, isIpv4Mapped, parseIp, type IpBytes } from './ip-address.ts';

/** A parsed block: the network's 16 bytes and its prefix length out of 128. */
export interface Cidr {
  readonly network: IpBytes;
  /** 0–128, counted on the 16-byte form (an IPv4 `/8` is 104). */
  readonly bits: number;
  /** Canonical text: `10.0.0.0/8`, `2001:db8::/32`. */
  readonly text: string;
}

const PREFIX_LENGTH = /^(?:0|[1-9][0-9]{0,2})$/;

/** Whether the first `bits` bits of `a` and `b` are equal. */
function samePrefix(a: IpBytes, b: IpBytes, bits: number): boolean {
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (a[i] !== b[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((a[whole]! ^ b[whole]!) & mask) === 0;
}

/** `bytes` with every bit after the first `bits` cleared. */
function networkOf(bytes: IpBytes, bits: number): IpBytes {
  const out = new Uint8Array(16);
  const whole = bits >> 3;
  out.set(bytes.subarray(0, whole));
  const rest = bits & 7;
  if (rest !== 0) out[whole] = bytes[whole]! & ((0xff << (8 - rest)) & 0xff);
  return out;
}

function canonical(network: IpBytes, bits: number): string {
  return isIpv4Mapped(network) && bits >= 96 ? `${formatIp(network)}/${bits - 96}` : `${formatIp(network)}/${bits}`;
}

/**
 * Parses `a.b.c.d/n`, `x:x::/n`, or a bare address (a single host: `/32`, `/128`). Refuses
 * a zone id (an allowlist names hosts, not interfaces) and host bits after the prefix
 * (`10.0.0.1/8` is a typo for `10.0.0.1/32` or `10.0.0.0/8`; the reason says which).
 */
export function parseCidr(text: unknown): { ok: true; cidr: Cidr } | { ok: false; reason: string } {
  // `reason` has no subject ("is not an IPv4 …"): the caller names the entry, and quotes
  // the text only when it is its own configuration rather than a client's.
  if (typeof text !== 'string') return { ok: false, reason: 'is not a string' };
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  if (address.includes('%')) return { ok: false, reason: 'has a zone id; an allowlist names addresses, not interfaces' };
  const bytes = parseIp(address);
  if (bytes === undefined) return { ok: false, reason: 'is not an IPv4 or IPv6 address or CIDR block' };
  const v4 = !address.includes(':');
  const max = v4 ? 32 : 128;
  let bits = max;
  if (slash >= 0) {
    const length = text.slice(slash + 1);
    if (!PREFIX_LENGTH.test(length) || Number(length) > max) {
      return { ok: false, reason: `needs a prefix length from 0 to ${max}` };
    }
    bits = Number(length);
  }
  const bits128 = v4 ? bits + 96 : bits;
  const network = networkOf(bytes, bits128);
  if (!samePrefix(network, bytes, 128)) {
    return {
      ok: false,
      // The canonical forms are ours (digits, dots, hex groups), never the text as sent.
      reason: `has host bits set: write ${canonical(network, bits128)} for the block, or ${canonical(bytes, 128)} for the one address`,
    };
  }
  return { ok: true, cidr: Object.freeze({ network, bits: bits128, text: canonical(network, bits128) }) };
}

/** Whether `address` (16 bytes, from `parseIp`) lies in `cidr`. */
export function cidrContains(cidr: Cidr, address: IpBytes): boolean {
  return samePrefix(cidr.network, address, cidr.bits);
}

/** Whether `address` lies in any of `cidrs`. */
export function anyCidrContains(cidrs: readonly Cidr[], address: IpBytes): boolean {
  for (const cidr of cidrs) if (samePrefix(cidr.network, address, cidr.bits)) return true;
  return false;
}
