import { describe, expect, it } from 'vitest';
import { cidrContains, parseCidr } from './cidr.ts';
import { formatIp, parseIp } from './ip-address.ts';
import { ipInCidrs } from './ip-in-cidrs.ts';

const text = (input: string): string | undefined => {
  const bytes = parseIp(input);
  return bytes === undefined ? undefined : formatIp(bytes);
};

describe('parseIp / formatIp', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['0.0.0.0', '0.0.0.0'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8::0:1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['fe80::1%25', 'fe80::1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
  ])('reads %s as %s', (input, canonical) => {
    expect(text(input)).toBe(canonical);
  });

  it.each([
    '', ' 1.2.3.4', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.04', '1.2.3.-1', '1.2.3.4/32', '1.2.3.4%eth0',
    ':', ':1', '1:', ':::', '1::2::3', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::8:9', '[::1]', '::1%', '::1%a b',
    '1.2.3.4::', '::1.2.3', '::1.2.3.4.5', '1:2:3:4:5:6:7:1.2.3.4', 'localhost', '0x7f.0.0.1', '٣.1.1.1',
  ])('refuses %j', (input) => {
    expect(parseIp(input)).toBeUndefined();
  });

  it('refuses anything that is not a string', () => {
    for (const value of [undefined, null, 1, {}, ['1.2.3.4']]) expect(parseIp(value)).toBeUndefined();
  });
});

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['10.1.2.3', '10.1.2.3/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['::1', '::1/128'],
    ['::/0', '::/0'],
    ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
  ])('reads %s as %s', (input, canonical) => {
    const parsed = parseCidr(input);
    expect(parsed.ok && parsed.cidr.text).toBe(canonical);
  });

  it.each([
    ['10.0.0.1/8', /host bits set: write 10\.0\.0\.0\/8 for the block, or 10\.0\.0\.1\/32/],
    ['10.0.0.0/33', /prefix length from 0 to 32/],
    ['10.0.0.0/08', /prefix length/],
    ['10.0.0.0/', /prefix length/],
    ['2001:db8::/129', /0 to 128/],
    ['fe80::/10%eth0', /prefix length/],
    ['fe80::1%eth0', /zone id/],
    ['10.0.0.0/8/8', /prefix length/],
    ['example.com/24', /not an IPv4 or IPv6/],
  ])('refuses %s with a reason', (input, reason) => {
    const parsed = parseCidr(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });

  it('matches IPv4 blocks whether the peer is reported as IPv4 or IPv4-mapped IPv6', () => {
    const parsed = parseCidr('203.0.113.0/24');
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(cidrContains(parsed.cidr, parseIp('203.0.113.200')!)).toBe(true);
    expect(cidrContains(parsed.cidr, parseIp('::ffff:203.0.113.200')!)).toBe(true);
    expect(cidrContains(parsed.cidr, parseIp('203.0.114.1')!)).toBe(false);
    expect(cidrContains(parsed.cidr, parseIp('2001:db8::cb00:7101')!)).toBe(false);
  });
});

describe('ipInCidrs', () => {
  it('answers per address and throws a ConfigError for a bad block', () => {
    const office = ipInCidrs(['203.0.113.0/24', '2001:db8::/32']);
    expect(office('203.0.113.9')).toBe(true);
    expect(office('::ffff:203.0.113.9')).toBe(true);
    expect(office('2001:db8:ffff::1%en0')).toBe(true);
    expect(office('2001:db9::1')).toBe(false);
    expect(office('not an address')).toBe(false);
    expect(office(undefined)).toBe(false);
    expect(() => ipInCidrs(['10.0.0.1/8'])).toThrow(/host bits/);
  });
});
