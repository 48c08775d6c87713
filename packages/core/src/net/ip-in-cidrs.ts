/**
 * The public face of the CIDR matcher, for code outside the keyring (an admin route that
 * only answers from the office network, a log field).
 * @module
 */
import { ConfigError } from '../errors.ts';
import { anyCidrContains, parseCidr, type Cidr } from './cidr.ts';
import { parseIp } from './ip-address.ts';

/**
 * A predicate: whether an address (IPv4, IPv6, IPv4-mapped IPv6, with or without a zone
 * id) lies in any of `cidrs`. Invalid blocks throw `ConfigError` now; an invalid address
 * is simply outside.
 *
 * @example
 * ```ts
 * const office = ipInCidrs(['203.0.113.0/24', '2001:db8::/32']);
 * office('::ffff:203.0.113.9'); // true
 * ```
 */
export function ipInCidrs(cidrs: readonly string[]): (address: string | null | undefined) => boolean {
  const parsed: Cidr[] = cidrs.map((text) => {
    const result = parseCidr(text);
    if (!result.ok) throw new ConfigError(`ipInCidrs: ${JSON.stringify(text)} ${result.reason}`);
    return result.cidr;
  });
  return (address) => {
    const bytes = parseIp(address);
    return bytes !== undefined && anyCidrContains(parsed, bytes);
  };
}
