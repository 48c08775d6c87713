import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toProblem } from '../errors.ts';
import { singleAuthorization } from './authorization-header.ts';

const KEY = 'acme_live_0123456789abcdefghijABCDEFGHIJ01abcDEF';
const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,15}$/);
/** One set of credentials: a scheme alone, with a token68, or with auth-params (commas inside quotes too). */
const credentials = fc.oneof(
  token,
  fc.tuple(token, fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,20}=*$/)).map(([s, t]) => `${s} ${t}`),
  fc
    .tuple(token, fc.array(fc.tuple(token, fc.stringMatching(/^[^"\\]{0,10}$/)), { minLength: 1, maxLength: 3 }))
    .map(([s, params]) => `${s} ${params.map(([n, v]) => `${n}="${v}"`).join(', ')}`),
);

describe('singleAuthorization', () => {
  it('hands one value through unchanged: absent, one key, one scheme with auth-params', () => {
    for (const value of [undefined, null, '', `ApiKey ${KEY}`, 'Bearer x', 'Digest realm="a, ApiKey b", nonce="c"', `ApiKey ${KEY},`]) {
      expect(singleAuthorization(value)).toBe(value);
    }
    expect(singleAuthorization([`ApiKey ${KEY}`])).toBe(`ApiKey ${KEY}`);
    // Two field lines, one of them empty: one set of credentials, joined as Headers joins them.
    expect(singleAuthorization([`ApiKey ${KEY}`, ''])).toBe(`ApiKey ${KEY}, `);
  });

  it('refuses two sets of credentials with 400 invalid_request naming `authorization`, quoting neither', () => {
    for (const values of [[`ApiKey ${KEY}`, `ApiKey ${KEY}`], `ApiKey ${KEY}, ApiKey x`, ['Bearer x', `ApiKey ${KEY}`], `ApiKey ${KEY},Basic abc==`]) {
      let thrown: unknown;
      try {
        singleAuthorization(values);
      } catch (error) {
        thrown = error;
      }
      const { status, body } = toProblem(thrown);
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 'invalid_request', field: 'authorization' });
      expect(JSON.stringify(body)).not.toContain(KEY.slice(-12));
    }
  });

  it('refuses any two or more credentials, as field lines or in one joined value; accepts any one', () => {
    fc.assert(
      fc.property(fc.array(credentials, { minLength: 1, maxLength: 4 }), fc.boolean(), (list, asLines) => {
        const values = asLines ? list : list.join(', ');
        if (list.length === 1) expect(singleAuthorization(values)).toBe(list[0]);
        else expect(() => singleAuthorization(values)).toThrow(/more than one set of credentials/);
      }),
    );
  });
});
