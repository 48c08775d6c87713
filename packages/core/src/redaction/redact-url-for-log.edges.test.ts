/**
 * `redactUrlForLog` output for output: short pieces as sent, each long piece cut on its
 * own (the delimiters kept), a whole key in a credential parameter as `…abcd`.
 */
import { describe, expect, it } from 'vitest';
import { redactUrlForLog } from './redact-url-for-log.ts';

describe('redactUrlForLog edges', () => {
  it('keeps short pieces as sent and cuts each long one to its first 3 and last 4', () => {
    expect(redactUrlForLog('/api/orders?limit=20&status=paid')).toBe('/api/orders?limit=20&status=paid');
    expect(redactUrlForLog('/api/orders?status=paid&cursor=eyJ2IjoxfQ')).toBe('/api/orders?status=paid&cursor=eyJ…oxfQ');
    expect(redactUrlForLog('/api/keys/key_7Hq2mXbP0aLr9sVtY3eWcN')).toBe('/api/keys/key_7Hq…eWcN');
    expect(redactUrlForLog('/abcdefgh/ijklmnop?qrstuvwx=yz0123456;a=b#fragment12')).toBe('/abc…efgh/ijk…mnop?qrs…uvwx=yz0…3456;a=b#fra…nt12');
  });

  it('takes a URL object as well', () => {
    expect(redactUrlForLog(new URL('https://api.example.com/api/orders?cursor=eyJ2IjoxfQ'))).toBe('https://api.example.com/api/orders?cursor=eyJ…oxfQ');
  });
});
