/**
 * The package's tests run twice (vitest.config.ts): once against kysely 0.29, once with
 * `kysely` resolved to 0.28 (the `kysely-028` devDependency), the line npm installs on
 * Node 20. The alias applies to every import of `kysely`, the sources under test
 * included; this checks each run has the line it claims, so a broken alias cannot pass
 * the 0.29 run off as the 0.28 one.
 */
import * as resolved from 'kysely';
import * as line028 from 'kysely-028';
import { describe, expect, it } from 'vitest';

const expected = process.env.KYSELY_LINE === '0.28' ? '0.28' : '0.29';

describe(`kysely ${expected}`, () => {
  it('is the kysely that `kysely` resolves to in this run', () => {
    expect((resolved.Kysely as unknown) === line028.Kysely).toBe(expected === '0.28');
  });
});
