/**
 * The trusted-proxy rule, by property: a client may write anything into
 * `X-Forwarded-For`; with the right trust setting the resolved address is still the one
 * the outermost trusted proxy saw, and with no trust setting the header changes nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createClientAddressResolver } from './client-address.ts';
import { formatIp, parseIp } from './ip-address.ts';

const RUNS = { numRuns: 200 };
const octet = fc.nat(255);
const publicV4 = fc.tuple(fc.integer({ min: 11, max: 99 }), octet, octet, octet).map((p) => p.join('.'));
const proxyV4 = fc.tuple(octet, octet, octet).map((p) => `10.${p.join('.')}`);
const publicV6 = fc.tuple(fc.integer({ min: 0x2001, max: 0x2fff }), fc.nat(0xffff), fc.nat(0xffff)).map(([a, b, c]) => `${a.toString(16)}:${b.toString(16)}::${c.toString(16)}`);
/** Anything a client can put in the header, junk and commas included. */
const spoofed = fc.array(fc.oneof(publicV4, proxyV4, publicV6, fc.constant('unknown'), fc.string({ maxLength: 20 }).filter((s) => !s.includes(','))), { maxLength: 6 });
const canonical = (text: string): string => formatIp(parseIp(text)!);

/** What the app receives when `client` goes through `proxies` (outermost first), having sent `sent`. */
function chain(client: string, proxies: readonly string[], sent: readonly string[]): { remoteAddress: string; forwardedFor: string | undefined } {
  // Each proxy appends the address it received the request from.
  const header = [...sent];
  let from = client;
  for (const proxy of proxies) {
    header.push(from);
    from = proxy;
  }
  return { remoteAddress: from, forwardedFor: header.length === 0 ? undefined : header.join(', ') };
}

describe('client address behind trusted proxies', () => {
  it('{ hops: n }: n proxies in front, whatever the client sent, the client is who the outermost proxy saw', () => {
    fc.assert(
      fc.property(fc.oneof(publicV4, publicV6), fc.array(proxyV4, { minLength: 1, maxLength: 5 }), spoofed, (client, proxies, sent) => {
        const resolve = createClientAddressResolver({ hops: proxies.length });
        expect(resolve(chain(client, proxies, sent))).toBe(canonical(client));
      }),
      RUNS,
    );
  });

  it('{ cidrs }: proxies inside the blocks are skipped from the right; the first address outside them is the client', () => {
    fc.assert(
      fc.property(fc.oneof(publicV4, publicV6), fc.array(proxyV4, { maxLength: 5 }), spoofed, (client, proxies, sent) => {
        const resolve = createClientAddressResolver({ cidrs: ['10.0.0.0/8'] });
        expect(resolve(chain(client, proxies, sent))).toBe(canonical(client));
      }),
      RUNS,
    );
  });

  it('false (the default): the header is never read', () => {
    fc.assert(
      fc.property(fc.oneof(publicV4, publicV6), spoofed, (client, sent) => {
        const resolve = createClientAddressResolver();
        expect(resolve({ remoteAddress: client, forwardedFor: sent.join(',') })).toBe(canonical(client));
      }),
      RUNS,
    );
  });

  it('a client that bypasses the proxy (hops 1, peer is the client itself) gets its own socket address or a spoofed-free answer', () => {
    fc.assert(
      fc.property(publicV4, spoofed, (client, sent) => {
        // Misconfiguration the docs warn about: hops counts proxies that are not there, so
        // the entry left of the socket is the client's own text. It can only pick what it
        // wrote, never something that is not an address.
        const result = createClientAddressResolver({ hops: 1 })({ remoteAddress: client, forwardedFor: sent.join(',') || undefined });
        if (result !== undefined) expect(parseIp(result)).toBeDefined();
      }),
      RUNS,
    );
  });
});

describe('createClientAddressResolver', () => {
  it('reads ports, brackets and several header lines the way proxies write them', () => {
    const hops2 = createClientAddressResolver({ hops: 2 });
    expect(hops2({ remoteAddress: '10.0.0.2', forwardedFor: ['198.51.100.7:41234', '10.0.0.1'] })).toBe('198.51.100.7');
    expect(hops2({ remoteAddress: '10.0.0.2', forwardedFor: '[2001:db8::7]:443, 10.0.0.1' })).toBe('2001:db8::7');
    expect(hops2({ remoteAddress: '::ffff:10.0.0.2', forwardedFor: '2001:DB8::7,10.0.0.1' })).toBe('2001:db8::7');
  });

  it('is unknown (undefined) when the socket address is missing or the chosen entry is junk', () => {
    expect(createClientAddressResolver()({ remoteAddress: undefined })).toBeUndefined();
    expect(createClientAddressResolver({ hops: 1 })({ remoteAddress: undefined, forwardedFor: '1.2.3.4' })).toBeUndefined();
    expect(createClientAddressResolver({ hops: 1 })({ remoteAddress: '10.0.0.1', forwardedFor: 'unknown' })).toBeUndefined();
    expect(createClientAddressResolver({ cidrs: ['10.0.0.0/8'] })({ remoteAddress: '10.0.0.1', forwardedFor: '1.2.3.4, _hidden' })).toBeUndefined();
  });

  it('with fewer entries than hops, takes the leftmost (all were written by trusted proxies)', () => {
    expect(createClientAddressResolver({ hops: 3 })({ remoteAddress: '10.0.0.3', forwardedFor: '198.51.100.7' })).toBe('198.51.100.7');
    expect(createClientAddressResolver({ hops: 3 })({ remoteAddress: '10.0.0.3' })).toBe('10.0.0.3');
  });

  it.each([[{ hops: 0 }], [{ hops: 1.5 }], [{ hops: 33 }], [{ cidrs: [] }], [{ cidrs: ['10.0.0.1/8'] }], [{ cidrs: 'x' }], [true], [{}]])(
    'refuses %j with a ConfigError',
    (setting) => {
      expect(() => createClientAddressResolver(setting as never)).toThrow(ConfigError);
    },
  );
});

describe('the socket peer, remembered per text', () => {
  it('answers as parsing afresh would, for repeated, new, junk and far more than 256 distinct peers', () => {
    const peer = fc.oneof(publicV4, proxyV4, publicV6, fc.constant('::ffff:127.0.0.1'), fc.constant('::1'), fc.string({ maxLength: 12 }), fc.constant('1'.repeat(120)));
    fc.assert(
      fc.property(fc.array(peer, { minLength: 1, maxLength: 700 }), fc.constantFrom(false as const, { hops: 1 } as const), (peers, trustProxy) => {
        const resolve = createClientAddressResolver(trustProxy);
        for (const remoteAddress of [...peers, ...peers]) {
          const bytes = parseIp(remoteAddress);
          expect(resolve({ remoteAddress })).toBe(bytes === undefined ? undefined : formatIp(bytes));
        }
      }),
      { numRuns: 50 },
    );
  });
});
