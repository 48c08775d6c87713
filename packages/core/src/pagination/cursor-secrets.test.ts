import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createCursorCodec } from './cursor-codec.ts';
import { cursorSecrets } from './cursor-secrets.ts';

describe('cursorSecrets', () => {
  it('reads comma-separated secrets, newest first', () => {
    expect(cursorSecrets(' new-secret-new-secret-new-secret-1 , old-secret-old-secret-old-secret-0,')).toEqual([
      'new-secret-new-secret-new-secret-1',
      'old-secret-old-secret-old-secret-0',
    ]);
  });

  it.each([undefined, '', ' , '])('fails fast naming the variable when the secret is %j outside development', (value) => {
    expect(() => cursorSecrets(value)).toThrow(ConfigError);
    expect(() => cursorSecrets(value, { name: 'ORDERS_CURSOR_SECRET' })).toThrow(
      /^ORDERS_CURSOR_SECRET is not set: .*openssl rand -base64 32.*\{ development: true \}/,
    );
  });

  it('signs with a random throwaway secret in development, a new one per call', () => {
    const [a] = cursorSecrets(undefined, { development: true });
    const [b] = cursorSecrets('', { development: true });
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(() => createCursorCodec({ secrets: [a!] })).not.toThrow();
  });

  it('still leaves a short secret to the codec, which refuses it', () => {
    expect(() => createCursorCodec({ secrets: cursorSecrets('short') })).toThrow(/at least 32 random bytes/);
  });
});
