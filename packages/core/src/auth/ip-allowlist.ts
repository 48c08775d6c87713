/**
 * A key's IP allowlist: the CIDR blocks its requests may come from. Checked as given to
 * `issue`/`update` (400 `invalid_request` naming `ipAllowlist`), stored in canonical
 * form, and matched per request against the client address (403 `ip_not_allowed`).
 * @module
 */
import { KeysetError } from '../errors.ts';
import { anyCidrContains, parseCidr, type Cidr } from '../net/cidr.ts';
import { parseIp } from '../net/ip-address.ts';

/** Blocks one key may list. */
export const MAX_IP_ALLOWLIST = 100;

function invalid(detail: string): KeysetError {
  return new KeysetError('invalid_request', { detail, extensions: { field: 'ipAllowlist' } });
}

/**
 * The canonical, de-duplicated blocks of `value`, or `null` (any address) for
 * `null`/`undefined`. An empty list is refused: a key no address may use is a revoked key.
 */
export function validateIpAllowlist(value: unknown): readonly string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IP_ALLOWLIST) {
    throw invalid(`\`ipAllowlist\` must be null (any address) or an array of 1 to ${MAX_IP_ALLOWLIST} IPv4/IPv6 addresses or CIDR blocks, e.g. ["203.0.113.0/24", "2001:db8::/32"].`);
  }
  const out: string[] = [];
  for (const [i, item] of (value as unknown[]).entries()) {
    const parsed = parseCidr(item);
    // The entry is named by its position: what was sent is not echoed.
    if (!parsed.ok) throw invalid(`\`ipAllowlist[${i}]\` ${parsed.reason}.`);
    if (!out.includes(parsed.cidr.text)) out.push(parsed.cidr.text);
  }
  return Object.freeze(out);
}

/** Whether `address` may use a key with allowlist `list`; see {@link createIpAllowlistCheck}. */
export type IpAllowlistCheck = (list: readonly string[] | null, address: string | undefined) => boolean;

/**
 * The allowlist check of one authenticator, which keeps each frozen list's parsed blocks
 * (a cached `VerifiedKey`'s list is parsed once, not on every request). `address` is the
 * canonical client address, `undefined` when unknown. No list: any address, known or not.
 * A list and no known address: refused, since the check cannot be made.
 */
export function createIpAllowlistCheck(): IpAllowlistCheck {
  const compiled = new WeakMap<readonly string[], readonly Cidr[]>();

  function compile(list: readonly string[]): readonly Cidr[] {
    let cidrs = compiled.get(list);
    if (cidrs === undefined) {
      // Stored lists are canonical; one a store hands back broken matches nothing.
      cidrs = list.flatMap((text) => {
        const parsed = parseCidr(text);
        return parsed.ok ? [parsed.cidr] : [];
      });
      if (Object.isFrozen(list)) compiled.set(list, cidrs);
    }
    return cidrs;
  }

  return function ipAllowed(list, address) {
    if (list === null) return true;
    const bytes = parseIp(address);
    return bytes !== undefined && anyCidrContains(compile(list), bytes);
  };
}
