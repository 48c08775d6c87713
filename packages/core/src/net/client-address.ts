/**
 * Which address a request comes from. The socket's
 * peer address is the only thing a client cannot forge, so it is the answer unless the
 * operator says that a proxy they run sits in front: only then is `X-Forwarded-For` read,
 * and only as far as the trusted proxies go. Each proxy APPENDS the address it received
 * the request from, so the list is read from the right: everything left of the last
 * trusted hop was written by the client and is ignored.
 *
 * Adapters pass the socket address and the header; the policy lives here.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { anyCidrContains, parseCidr, type Cidr } from './cidr.ts';
import { formatIp, parseIp, type IpBytes } from './ip-address.ts';

/**
 * Which `X-Forwarded-For` entries to believe.
 * - `false`: none; the socket's peer is the client (no proxy in front).
 * - `{ hops: n }`: exactly `n` proxies you run sit in front (a load balancer is 1); the
 *   client is the address the outermost of them saw.
 * - `{ cidrs: [...] }`: any peer inside these blocks is a proxy you run; the client is the
 *   first address, reading from the right, outside them.
 */
export type TrustProxy = false | { readonly hops: number } | { readonly cidrs: readonly string[] };

/** Every name a `TrustProxy` object knows (the guard's `trustProxy` too). Internal. */
export const TRUST_PROXY_OPTIONS: KnownOptions<TrustProxy> = { hops: true, cidrs: true };

/** What the resolver reads from a request. Adapters fill it in; they decide nothing. */
export interface ClientAddressInput {
  /** The socket's peer address as the runtime reports it (`req.socket.remoteAddress`). */
  remoteAddress?: string | null | undefined;
  /** The `X-Forwarded-For` header: its value, or one value per header line. */
  forwardedFor?: string | readonly string[] | null | undefined;
}

/** Returns the client's canonical address, or `undefined` when it cannot be known. */
export type ClientAddressResolver = (input: ClientAddressInput) => string | undefined;

const MAX_HOPS = 32;

/** The address in one `X-Forwarded-For` entry: drops brackets and a port, as proxies write them. */
function entryAddress(entry: string): IpBytes | undefined {
  const text = entry.trim();
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    const rest = text.slice(close + 1);
    return close > 0 && (rest === '' || /^:[0-9]{1,5}$/.test(rest)) ? parseIp(text.slice(1, close)) : undefined;
  }
  const colon = text.indexOf(':');
  // One colon: IPv4 with a port (`203.0.113.7:41234`). More: an IPv6 address.
  if (colon >= 0 && text.indexOf(':', colon + 1) < 0) {
    return /^[0-9]{1,5}$/.test(text.slice(colon + 1)) ? parseIp(text.slice(0, colon)) : undefined;
  }
  return parseIp(text);
}

function headerEntries(forwardedFor: ClientAddressInput['forwardedFor']): string[] {
  if (forwardedFor === undefined || forwardedFor === null) return [];
  const lines = typeof forwardedFor === 'string' ? [forwardedFor] : [...forwardedFor];
  // Several header lines are one list, in order (RFC 9110 §5.3).
  return lines.flatMap((line) => (typeof line === 'string' ? line.split(',') : [])).filter((e) => e.trim() !== '');
}

/** Distinct peer addresses remembered by one resolver before it starts afresh. */
const PEER_MEMO_SIZE = 256;

/**
 * The socket peer's canonical address (`undefined` when it is not an address), remembered
 * per text: parsing and printing an IPv6 address by hand is costly next to a lookup, and a server
 * sees the same few peers (its load balancers, keep-alive clients) request after
 * request. The canonical form depends on the text alone, so a remembered answer is always
 * the one parsing would give; the memo is bounded, and cleared when full.
 */
function canonicalPeer(): (input: ClientAddressInput) => string | undefined {
  let lastText: string | undefined;
  let lastAddress: string | undefined;
  const memo = new Map<string, string | undefined>();
  return (input) => {
    const text = input.remoteAddress;
    if (typeof text !== 'string') return undefined;
    if (text === lastText) return lastAddress;
    // Only what could be an address is remembered (parseIp refuses anything longer).
    if (text.length > 100) return undefined;
    let address = memo.get(text);
    if (address === undefined && !memo.has(text)) {
      const bytes = parseIp(text);
      address = bytes === undefined ? undefined : formatIp(bytes);
      if (memo.size >= PEER_MEMO_SIZE) memo.clear();
      memo.set(text, address);
    }
    lastText = text;
    lastAddress = address;
    return address;
  };
}

/**
 * Creates the resolver for a trust setting. Validates it now and throws `ConfigError`.
 *
 * @example
 * ```ts
 * const clientAddress = createClientAddressResolver({ hops: 1 }); // one load balancer in front
 * clientAddress({ remoteAddress: '10.0.0.5', forwardedFor: '198.51.100.1, 203.0.113.7' }); // '203.0.113.7'
 * ```
 */
export function createClientAddressResolver(trustProxy: TrustProxy = false): ClientAddressResolver {
  if (trustProxy === false) return canonicalPeer();
  if (typeof trustProxy === 'object' && trustProxy !== null) assertKnownOptions('createClientAddressResolver', trustProxy, TRUST_PROXY_OPTIONS, 'trustProxy');
  if (typeof trustProxy !== 'object' || trustProxy === null) {
    throw new ConfigError('trustProxy must be false, { hops: n } or { cidrs: [...] }');
  }
  if ('hops' in trustProxy) {
    const { hops } = trustProxy;
    if (!Number.isSafeInteger(hops) || hops < 1 || hops > MAX_HOPS) {
      throw new ConfigError(`trustProxy.hops must be an integer from 1 to ${MAX_HOPS} (the proxies you run in front), got ${String(hops)}; use false for none`);
    }
    const peer = canonicalPeer();
    return (input) => {
      if (peer(input) === undefined) return undefined;
      const entries = headerEntries(input.forwardedFor);
      // [...entries, socket]: the last `hops` are our proxies; the client is just left of
      // them. Fewer entries than that: every one was written by our proxies, so the
      // leftmost is the furthest a trusted proxy saw.
      const index = Math.max(0, entries.length - hops);
      const entry = index === entries.length ? input.remoteAddress! : entries[index]!;
      const bytes = index === entries.length ? parseIp(entry) : entryAddress(entry);
      return bytes === undefined ? undefined : formatIp(bytes);
    };
  }
  if ('cidrs' in trustProxy) {
    const { cidrs } = trustProxy;
    if (!Array.isArray(cidrs) || cidrs.length === 0) {
      throw new ConfigError('trustProxy.cidrs must be a non-empty array of CIDR blocks, e.g. [\'10.0.0.0/8\']; use false for none');
    }
    const trusted: Cidr[] = cidrs.map((text) => {
      const parsed = parseCidr(text);
      if (!parsed.ok) throw new ConfigError(`trustProxy.cidrs: ${JSON.stringify(text)} ${parsed.reason}`);
      return parsed.cidr;
    });
    return (input) => {
      let current = parseIp(input.remoteAddress);
      if (current === undefined) return undefined;
      const entries = headerEntries(input.forwardedFor);
      for (let i = entries.length - 1; i >= 0 && anyCidrContains(trusted, current); i--) {
        current = entryAddress(entries[i]!);
        // A trusted proxy wrote junk: nothing further left can be believed.
        if (current === undefined) return undefined;
      }
      return formatIp(current);
    };
  }
  throw new ConfigError('trustProxy must be false, { hops: n } or { cidrs: [...] }');
}
