/**
 * Messages that quote client text shortened (`sort`'s unknown or malformed field, a key
 * metadata member's path) never hold key text: a key cut at 40 characters no longer looks
 * like a key to `toProblem`'s redaction, so the cut must come after it.
 *
 * Property: a key with any prefix, glued after 0–30 letters, digits or `_`, in `?sort=`
 * (as a field, `-` field, or malformed term), as a metadata member name, or in an IP
 * allowlist entry (quoted up to 100 characters, so glued after up to 90) → neither the
 * error's message nor its problem body holds 8 characters of the key's secret part.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeysetError, toProblem } from '../errors.ts';
import { validateIpAllowlist } from '../auth/ip-allowlist.ts';
import { validateMetadata } from '../keys/key-metadata.ts';
import { createSortParam } from '../pagination/sort-param.ts';
import { defineSortSpec } from '../pagination/sort-spec.ts';
import { clipInput } from './clip-input.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const secret = fc.array(fc.constantFrom(...BASE62), { minLength: 38, maxLength: 38 }).map((chars) => chars.join(''));
const prefix = fc.constantFrom('acme_live', 'sk', 'k9_test_2', 'x');
const glue = fc.array(fc.constantFrom(...'ab_Z09'), { maxLength: 30 }).map((chars) => chars.join(''));

function refusal(run: () => unknown): KeysetError {
  try {
    run();
  } catch (error) {
    if (error instanceof KeysetError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

function expectNoSecret(error: KeysetError, secretPart: string): void {
  const shown = `${error.message}\n${JSON.stringify(toProblem(error))}`;
  for (let i = 0; i + 8 <= secretPart.length; i++) expect(shown).not.toContain(secretPart.slice(i, i + 8));
}

const sortParam = createSortParam(
  [
    { name: 'amountCents', column: 'amount_cents', type: 'int' },
    { name: 'id', type: 'bigint', unique: true },
  ],
  defineSortSpec([{ key: 'id', dir: 'desc', type: 'bigint', unique: true }]),
);

describe('client text quoted in messages holds no key', () => {
  it('?sort= with a key as (part of) a field name, unknown or malformed', () => {
    fc.assert(
      fc.property(prefix, secret, glue, fc.constantFrom('', '-', '--', '+'), (p, s, before, sign) => {
        const error = refusal(() => sortParam.resolve(new URLSearchParams({ sort: `amountCents,${sign}${before}${p}_${s}` })));
        expectNoSecret(error, s);
      }),
    );
  });

  it('a metadata member name holding a key', () => {
    fc.assert(
      fc.property(prefix, secret, glue, (p, s, before) => {
        // A nested bad value, so the message quotes the path through the key-named member.
        const error = refusal(() => validateMetadata({ [`${before}${p}_${s}`]: { deep: () => 1 } }));
        expectNoSecret(error, s);
      }),
    );
  });

  it('an IP allowlist entry holding a key', () => {
    const longGlue = fc.array(fc.constantFrom(...'ab_Z09:.'), { maxLength: 90 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(prefix, secret, longGlue, (p, s, before) => {
        const error = refusal(() => validateIpAllowlist([`${before}${p}_${s}`]));
        expectNoSecret(error, s);
      }),
    );
  });

  it('?sort= with a mistyped key (a character dropped, or - or _ typed into it), which no redaction can recognise', () => {
    fc.assert(
      fc.property(prefix, secret, glue, fc.nat({ max: 37 }), fc.constantFrom('', '-', '_', 'A'), (p, s, before, at, typo) => {
        const mistyped = `${p}_${s.slice(0, at)}${typo}${s.slice(at + 1)}`;
        for (const sort of [`amountCents,${before}${mistyped}`, `-${mistyped}`, mistyped]) {
          let error: KeysetError | undefined;
          try {
            sortParam.resolve(new URLSearchParams({ sort }));
          } catch (caught) {
            if (!(caught instanceof KeysetError)) throw caught;
            error = caught;
          }
          if (error !== undefined) expectNoSecret(error, s);
        }
      }),
    );
  });

  it('clipInput redacts, shows no 8 letters and digits in a row, and does not show text longer than max at all', () => {
    expect(clipInput('x'.repeat(50), 40)).toBe('xxx…xxxx');
    expect(clipInput('Zz0Yy1Xx2Ww3'.repeat(4), 40)).toBe('…2Ww3'); // 37 or more in a row: a secret, whole or cut
    expect(clipInput('x'.repeat(20), 40)).toBe('xxx…xxxx');
    expect(clipInput('- '.repeat(30), 40)).toBe('…(60 characters)');
    expect(clipInput('short', 40)).toBe('short');
    expect(clipInput('rateLimits[0].windowSecond', 40)).toBe('rat…mits[0].win…cond');
    expect(clipInput(`acme_live_${'A1b2C3d4E5'.repeat(3)}S9S9S9S9`, 40)).toBe('…S9S9');
    expect(clipInput(`acme_live_${'A1b2C3d4E5'.repeat(3)}S9S9S9S`, 40)).toBe('…9S9S'); // one character short of a key
    expect(clipInput(`acme_live_${'A1b2C3d4E5'.repeat(2)}_S9S9S9S9S9S9S9S9S9`, 40)).toBe('…S9S9'); // a `_` typed into it
  });
});
