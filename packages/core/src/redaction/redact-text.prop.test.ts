/**
 * Redaction finds key-shaped text anywhere, whatever stands
 * before or after it (a key followed by `x` used to slip through), in free text, in every
 * part of a URL (also percent-encoded), and in every member of a problem body.
 *
 * Property: random strings with keys embedded at random places between random characters
 * → the output holds no run of 8 characters of any key's secret part.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeysetError, toProblem } from '../errors.ts';
import { KEY_CHECKSUM_LENGTH, KEY_RANDOM_LENGTH, generateKey } from '../keys/key-format.ts';
import { MANGLES, keyFrom, mangleKey, mangledKey, secretLeak } from '@keyset/test-support';
import { clipInput } from '../internal/clip-input.ts';
import { redactUrl } from '../auth/query-credentials.ts';
import { redactRuns } from './redact-runs.ts';
import { containsKeyShapedText, redactEncodedText, redactText } from './redact-text.ts';
import { redactUrlForLog } from './redact-url-for-log.ts';

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

describe('redaction finds keys anywhere', () => {
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
        fc.pre(!/[0-9A-Za-z]{19}/.test(text)); // neither rule fires without a run of 19
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

/**
 * Mangled keys (separator swapped, bare secret, last character cut, one
 * deleted, `_` or `-` typed in, `_` percent-encoded up to four times, lowercased).
 */
describe('mangled keys', () => {
  it('redactText and redactEncodedText recognise every single mangling, with anything around it', () => {
    fc.assert(
      fc.property(mangledKey, filler, filler, ({ key, sent }, before, after) => {
        const text = `${before} ${sent} ${after}`;
        expect(secretLeak(redactEncodedText(text), [key]), text).toBeUndefined();
        expect(containsKeyShapedText(sent), sent).toBe(true);
      }),
      RUNS,
    );
  });

  /**
   * A bare secret with one character lost, where a log line or a JSON body puts it: at the
   * very start of the text, after `": "` or `":"`, after spaces. 37 characters alone: the
   * smallest run the redaction must take, so raising that minimum by one shows here.
   */
  it('redactText: a bare secret missing any one character, at the start, after `": "` and after spaces', () => {
    const places = [
      (s: string) => s,
      (s: string) => `{"token": "${s}"}`,
      (s: string) => `{"token":"${s}"}`,
      (s: string) => `   ${s}`,
      (s: string) => `token ${s} seen`,
      (s: string) => `${s} `,
    ];
    fc.assert(
      fc.property(fc.record({ prefix, seed: fc.integer() }), fc.nat({ max: SECRET_LENGTH - 1 }), fc.nat({ max: places.length - 1 }), ({ prefix: p, seed }, drop, where) => {
        const key = keyFrom(p, seed);
        const secret = key.slice(-SECRET_LENGTH);
        const sent = secret.slice(0, drop) + secret.slice(drop + 1);
        const text = places[where]!(sent);
        expect(secretLeak(redactText(text), [key]), text).toBeUndefined();
        expect(secretLeak(redactEncodedText(text), [key]), text).toBeUndefined();
        expect(containsKeyShapedText(text), text).toBe(true);
      }),
      RUNS,
    );
  });

  /** Arbitrary mangling: any characters typed in anywhere, any cut, any case change. */
  const anyMangling = fc
    .record({
      key: fc.record({ prefix, seed: fc.integer() }).map(({ prefix, seed }) => keyFrom(prefix, seed)),
      edits: fc.array(fc.tuple(fc.nat({ max: 60 }), fc.constantFrom('', '-', '_', '.', '%5F', '%2541', ' ', '/', 'é', 'x')), { maxLength: 6 }),
      cut: fc.nat({ max: 30 }),
      lower: fc.boolean(),
    })
    .map(({ key, edits, cut, lower }) => {
      let sent = key;
      for (const [at, insert] of edits) sent = insert === '' ? sent.slice(0, at) + sent.slice(at + 1) : sent.slice(0, at) + insert + sent.slice(at);
      sent = sent.slice(0, sent.length - cut);
      return { key, sent: lower ? sent.toLowerCase() : sent };
    });

  it('redactRuns, clipInput and redactUrlForLog show no 8 characters of the secret, whatever was done to the key', () => {
    fc.assert(
      fc.property(anyMangling, filler, fc.constantFrom('path', 'name', 'value', 'fragment'), ({ key, sent }, glue, where) => {
        const text = `${glue}${sent}${glue}`;
        expect(secretLeak(redactRuns(text), [key]), text).toBeUndefined();
        expect(secretLeak(clipInput(text, 200), [key]), text).toBeUndefined();
        const url =
          where === 'path' ? `/api/keys/${text}/rotate` :
          where === 'name' ? `/api/orders?limit=5&${text}=1` :
          where === 'value' ? `/api/orders?q=${text}&limit=5` :
          `/api/orders#${text}`;
        expect(secretLeak(redactUrlForLog(url), [key]), url).toBeUndefined();
      }),
      RUNS,
    );
  });

  it('toProblem: instance and clipped quotes in detail and field show none of it; the body stays small', () => {
    fc.assert(
      fc.property(anyMangling, fc.constantFrom(...MANGLES), fc.nat(), ({ key, sent }, how, at) => {
        const other = keyFrom('ks_live', at);
        const listed = mangleKey(other, how, at, 1 + (at % 4));
        const error = new KeysetError('invalid_request', {
          detail: `Unknown field \`${clipInput(sent, 64)}\`, near ${listed}`,
          extensions: { field: `rateLimits[0].${clipInput(sent, 64)}`, raw: listed },
        });
        const { body } = toProblem(error, { instance: `/api/keys/${sent}/limits` });
        const text = JSON.stringify(body);
        expect(secretLeak(text, [key, other]), text).toBeUndefined();
      }),
      RUNS,
    );
    const huge = 'x'.repeat(9000);
    const { body } = toProblem(new KeysetError('invalid_request', { detail: `Unknown \`${huge}\``, extensions: { field: huge, [huge]: huge } }), { instance: `/${huge}` });
    expect(JSON.stringify(body).length).toBeLessThan(4096); // each member cut: 18 KB before
  });

  it('ordinary text is not key-shaped: names, ids, hex digests, UUIDs, hosts, timestamps', () => {
    for (const text of [
      'CI deploy bot',
      'nightly-export (billing team)',
      'key_7Hq2mXbP0aLr9sVtY3eWcN',
      'da39a3ee5e6b4b0d3255bfef95601890afd80709',
      'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855',
      '550e8400-e29b-41d4-a716-446655440000',
      'ip-10-0-1-23.eu-west-1.compute.internal',
      '2025-01-31T12:34:56.789123Z',
      'internationalization-localization',
      'orders:read reports:read',
    ]) {
      expect(containsKeyShapedText(text), text).toBe(false);
      expect(redactText(text)).toBe(text);
    }
  });

  it('redactRuns shows short text as sent and long runs as their first 3 and last 4 characters', () => {
    expect(redactRuns('?limit=20&status=paid')).toBe('?limit=20&status=paid');
    expect(redactRuns('/api/keys/key_7Hq2mXbP0aLr9sVtY3eWcN')).toBe('/api/keys/key_7Hq…eWcN');
    expect(redactRuns('windowSecond')).toBe('win…cond');
    expect(redactRuns('%2541%2542%2543%2544%2545%2546%2547%2548')).toBe('ABC…EFGH');
    expect(redactRuns(`x%${'25'.repeat(20)}41`)).toMatch(/^…\(\d+ characters\)$/);
  });
});
