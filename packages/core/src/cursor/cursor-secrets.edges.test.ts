/**
 * The exact texts `cursorSecrets` fails with: an unknown option names the function, and
 * a missing secret names `CURSOR_SECRET` when no other name is given.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { cursorSecrets } from './cursor-secrets.ts';

describe('cursorSecrets edges', () => {
  it('names itself for an unknown option', () => {
    expect(() => cursorSecrets('s', { developement: true } as never)).toThrow(ConfigError);
    expect(() => cursorSecrets('s', { developement: true } as never)).toThrow(/^cursorSecrets: unknown option `developement`/);
  });

  it('names CURSOR_SECRET when no name is given', () => {
    expect(() => cursorSecrets(undefined)).toThrow(/^CURSOR_SECRET is not set: .* Set CURSOR_SECRET to at least 32 random bytes/);
  });
});
