/**
 * IP addresses, parsed and printed by hand (core has no runtime dependencies and no
 * `node:net`). Every address is 16 bytes: an IPv4 address is held as its IPv4-mapped
 * IPv6 form `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2), which is also how a dual-stack Node
 * socket reports an IPv4 peer, so `10.1.2.3` and `::ffff:10.1.2.3` are one address.
 * @module
 */

/** 16 bytes, network order. */
export type IpBytes = Uint8Array;

/** Longest text accepted: a full IPv6 address with an embedded IPv4 and a zone id. */
const MAX_LENGTH = 100;
const IPV4_OCTET = /^(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;
/** RFC 6874 zone ids are interface names or numbers: unreserved characters only. */
const ZONE = /^[0-9A-Za-z._~-]+$/;

/**
 * The four bytes of a dotted-quad IPv4 address, or `undefined`. Strict: four decimal
 * octets without leading zeros (`010` is octal to some parsers, decimal to others).
 */
function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => IPV4_OCTET.test(p))) return undefined;
  return parts.map(Number);
}

function parseIpv6(text: string): IpBytes | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const parts = half.split(':');
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      if (i === parts.length - 1 && part.includes('.')) {
        const v4 = parseIpv4(part);
        if (v4 === undefined) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (HEX_GROUP.test(part)) out.push(parseInt(part, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0] as string);
  const tail = halves.length === 2 ? groups(halves[1] as string) : [];
  if (head === undefined || tail === undefined) return undefined;
  // An embedded IPv4 may only end the address.
  if (halves.length === 2 && head.length > 0 && (halves[0] as string).includes('.')) return undefined;
  const total = head.length + tail.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return undefined;
  const words = [...head, ...new Array<number>(8 - total).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

/**
 * The 16 bytes of an IPv4 or IPv6 address, or `undefined` when `text` is not one.
 * A zone id (`fe80::1%eth0`) is accepted and dropped: it names the interface a link-local
 * address was reached on, not a different host. No brackets, no port.
 */
export function parseIp(text: unknown): IpBytes | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_LENGTH) return undefined;
  if (!text.includes(':')) {
    const v4 = parseIpv4(text);
    return v4 === undefined ? undefined : mapped(v4);
  }
  const percent = text.indexOf('%');
  if (percent >= 0 && !ZONE.test(text.slice(percent + 1))) return undefined;
  return parseIpv6(percent >= 0 ? text.slice(0, percent) : text);
}

/** `::ffff:a.b.c.d` */
function mapped(v4: readonly number[]): IpBytes {
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  bytes.set(v4, 12);
  return bytes;
}

/** Whether `bytes` is an IPv4-mapped address (`::ffff:0:0/96`). */
export function isIpv4Mapped(bytes: IpBytes): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/**
 * Canonical text: dotted quad for IPv4 (and IPv4-mapped) addresses, RFC 5952 for IPv6
 * (lowercase, no leading zeros, the longest run of two or more zero groups as `::`, the
 * first one on a tie).
 */
export function formatIp(bytes: IpBytes): string {
  if (isIpv4Mapped(bytes)) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const words: number[] = [];
  for (let i = 0; i < 8; i++) words.push((bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number): string => words.slice(from, to).map((w) => w.toString(16)).join(':');
  if (bestStart < 0) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}
