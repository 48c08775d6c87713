/**
 * Issue 9, items 1 and 2: redaction finds key-shaped text anywhere, whatever stands
 * before or after it (a key followed by `x` used to slip through), in free text, in every
 * part of a URL (also percent-encoded), and in every member of a problem body.
 *
 * Property: random strings with keys embedded at random places between random characters
 * → the output holds no run of 8 characters of any key's secret part.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeysetError, toProblem } from '../errors.ts';
import { KEY_CHECKSUM_LENGTH, KEY_RANDOM_LENGTH, generateKey } from './key-format.ts';
import { redactUrl } from './query-credentials.ts';
import { redactText } from './redact-text.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH;

/** High-entropy secrets from a seed (fast-check's own strings are biased towards repeats). */
function secretFrom(seed: number): string {
  let state = seed >>> 0 || 1;
  let out = '';
  for (let i = 0; i < SECRET_LENGTH; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out += BASE62[(state >>> 0) % 62];
  }
  return out;
}

const prefix = fc.constantFrom('acme_live', 'sk', 'a', 'k9_test_2', 'x1');
const key = fc.record({ prefix, seed: fc.integer() }).map(({ prefix, seed }) => `${prefix}_${secretFrom(seed)}`);

/** Characters chosen to stick to keys: letters, digits, `_`, URL syntax, `%`, non-ASCII. */
const sticky = fc.constantFrom(...'aZ09x_-.%/?&=;#+ é€\u{1F600}"\\\n'.split(''));
const filler = fc.array(fc.oneof(sticky, fc.string({ maxLength: 3, unit: 'binary' }), fc.constantFrom(...BASE62.split(''))), { maxLength: 6 }).map((parts) => parts.join(''));

/** Random text with 1–3 keys at random places; some keys percent-encoded, char by char. */
function embedded(encode: boolean) {
  return fc
    .tuple(
      fc.array(fc.tuple(filler, key, fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 64, maxLength: 64 })), { minLength: 1, maxLength: 3 }),
      filler,
    )
    .map(([pieces, tail]) => ({
      keys: pieces.map(([, k]) => k),
      text:
        pieces
          .map(([before, k, modes]) => before + (encode ? [...k].map((ch, i) => encodeChar(ch, modes[i] ?? 0)).join('') : k))
          .join('') + tail,
    }));
}

function encodeChar(ch: string, mode: number): string {
  const hex = ch.charCodeAt(0).toString(16).padStart(2, '0');
  if (mode === 1) return `%${hex.toUpperCase()}`;
  if (mode === 2) return `%${hex}`;
  if (mode === 3) return `%25${hex.toUpperCase()}`; // encoded twice
  return ch;
}

function decodeAsciiRepeatedly(text: string): string {
  let out = text;
  for (let i = 0; i < 6; i++) out = out.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return out;
}

/** The first 8-character run of a key's secret part found in `output`, or undefined. */
function leak(output: string, keys: readonly string[]): string | undefined {
  const views = [output, decodeAsciiRepeatedly(output)];
  for (const k of keys) {
    const secret = k.slice(-SECRET_LENGTH);
    for (let i = 0; i + 8 <= secret.length; i++) {
      const run = secret.slice(i, i + 8);
      if (views.some((view) => view.includes(run))) return run;
    }
  }
  return undefined;
}

const RUNS = { numRuns: 300 };

describe('redaction finds keys anywhere (issue 9, items 1 and 2)', () => {
  it('the secret part is exactly what generateKey writes after the prefix', () => {
    expect(generateKey('acme_live').slice('acme_live_'.length)).toMatch(new RegExp(`^[0-9A-Za-z]{${SECRET_LENGTH}}$`));
  });

  it('redactText: no 8-character run of any embedded key survives, whatever surrounds it', () => {
    fc.assert(
      fc.property(embedded(false), ({ keys, text }) => {
        expect(leak(redactText(text), keys)).toBeUndefined();
      }),
      RUNS,
    );
  });

  it('redactText leaves text without a key unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        fc.pre(!/_[0-9A-Za-z]{38}/.test(text));
        expect(redactText(text)).toBe(text);
      }),
      RUNS,
    );
  });

  it('redactUrl: keys in the path, in query names and values and in the fragment, plain or percent-encoded', () => {
    fc.assert(
      fc.property(embedded(false), embedded(true), fc.constantFrom('path', 'name', 'value', 'fragment', 'anywhere'), (plain, encoded, where) => {
        for (const { keys, text } of [plain, encoded]) {
          const url =
            where === 'path' ? `/api/orders/${text}` :
            where === 'name' ? `/api/orders?limit=5&${text}=1` :
            where === 'value' ? `/api/orders?limit=5&q=${text}&x=1` :
            where === 'fragment' ? `/api/orders?limit=5#${text}` :
            `/${text}`;
          expect(leak(redactUrl(url), keys), url).toBeUndefined();
        }
      }),
      RUNS,
    );
  });

  it('toProblem: instance, detail, field and every extension member are redacted, on every status', () => {
    fc.assert(
      fc.property(embedded(false), embedded(true), fc.constantFrom('invalid_request', 'not_found', 'missing_api_key', 'unavailable' as const), (plain, encoded, code) => {
        const keys = [...plain.keys, ...encoded.keys];
        const error = new KeysetError(code, {
          detail: `\`scopes[0]\` is not a valid scope: ${JSON.stringify(plain.text)}`,
          extensions: { field: plain.text, [plain.text]: 1, nested: { list: [plain.text, { deep: plain.text }] } },
        });
        for (const thrown of [error, new Error(plain.text)]) {
          const { body } = toProblem(thrown, { instance: `/api/keys/${encoded.text}` });
          expect(leak(JSON.stringify(body), keys)).toBeUndefined();
        }
      }),
      RUNS,
    );
  });

  it('finds the cases the attack found: a key followed by a letter, in a path and a query', () => {
    const k = generateKey('acme_live');
    expect(redactUrl(`/api/orders?q=${k}x`)).toBe(`/api/orders?q=…${k.slice(-3)}x`);
    expect(redactUrl(`/api/orders/${k}x`)).toBe(`/api/orders/…${k.slice(-3)}x`);
    expect(redactUrl(`/api/orders/x${k}`)).toBe(`/api/orders/…${k.slice(-4)}`);
    expect(redactText(`${k}${k}`)).not.toContain(k.slice(-20, -12));
    const { body } = toProblem(new KeysetError('not_found'), { instance: `/api/orders/${k}` });
    expect(body.instance).toBe(`/api/orders/…${k.slice(-4)}`);
  });
});
