/**
 * The edges of `isWellFormedKey` the scanning contract leaves open: the exact refusal of
 * an empty prefix list, which a scanner's configuration shows its operator.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { isWellFormedKey } from './is-well-formed-key.ts';

describe('isWellFormedKey edges', () => {
  it('refuses an empty prefix list with a ConfigError saying what it needs', () => {
    expect(() => isWellFormedKey('acme_live_x', [])).toThrow(ConfigError);
    expect(() => isWellFormedKey('acme_live_x', [])).toThrow(/^isWellFormedKey needs at least one prefix$/);
  });
});
