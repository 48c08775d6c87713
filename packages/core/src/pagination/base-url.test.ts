import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { normalizeBaseUrl } from './base-url.ts';

describe('normalizeBaseUrl', () => {
  it('keeps scheme, host and path prefix, without a trailing slash', () => {
    expect(normalizeBaseUrl('https://api.example.com')).toBe('https://api.example.com');
    expect(normalizeBaseUrl('https://example.com/v1/')).toBe('https://example.com/v1');
    expect(normalizeBaseUrl(new URL('http://127.0.0.1:8080//'))).toBe('http://127.0.0.1:8080');
    expect(normalizeBaseUrl(undefined)).toBeUndefined();
  });

  it('refuses what cannot prefix a request path', () => {
    for (const bad of ['api.example.com', '/v1', 'ftp://example.com', 'https://example.com/?a=1', 'https://example.com/#x']) {
      expect(() => normalizeBaseUrl(bad), bad).toThrow(ConfigError);
    }
  });
});
