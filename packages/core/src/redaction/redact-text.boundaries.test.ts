/**
 * The exact edges of `redactText`, `redactEncodedText`, `decodeAsciiFully` and
 * `containsKeyShapedText`, output for output: where a run becomes a secret (37), where two
 * runs join (one character between, 37 together), which characters a run and a prefix are
 * made of, how far back a prefix is taken (32), which runs are not secrets (hex of one
 * case, fewer than 10 distinct characters), and how deep percent-encoding is looked
 * through (16 rounds). The mutation run over `redact-text.ts` (docs/security.md,
 * "Mutation testing") found each of these unpinned: the property tests check that keys
 * are hidden and ordinary text kept, not where the line is drawn.
 */
import { describe, expect, it } from 'vitest';
import { containsKeyShapedText, decodeAsciiFully, redactEncodedText, redactText } from './redact-text.ts';

/** A secret part: 38 letters and digits, the key format's length (the checksum is not looked at). */
const S = '0123456789abcdefghijABCDEFGHIJKLMN1a2B';
/** Another, for texts holding two. */
const S2 = 'ZYXWVUTSRQzyxwvutsrq9876543210PONMLKji';
/** `text` percent-encoded once more (`%` → `%25`). */
const encodeOnce = (text: string): string => text.replaceAll('%', '%25');
/** `%41` (`A`) encoded `levels` times in all. */
const encodedA = (levels: number): string => {
  let text = '%41';
  for (let level = 1; level < levels; level++) text = encodeOnce(text);
  return text;
};

describe('redactText: where a run is a secret', () => {
  it('37 letters and digits in a row are a secret; 36 are not', () => {
    expect(redactText(S.slice(0, 37))).toBe('…N1a2');
    expect(redactText(`(${S.slice(0, 37)})`)).toBe('(…N1a2)');
    expect(redactText(S.slice(0, 36))).toBe(S.slice(0, 36));
    expect(redactText(` ${S.slice(0, 36)} `)).toBe(` ${S.slice(0, 36)} `);
  });

  it('every letter and digit continues a run, from 0 to 9, A to Z and a to z; the characters around them end it', () => {
    // Each of 0 9 A Z a z sits inside the secret: were it to end the run, neither half would
    // be 37 long, nor the two together.
    const edges = '0abcdefgh9ABCDEFGHZmnopqrsaxyztuvwKLMz';
    expect(edges).toHaveLength(38);
    expect(redactText(edges)).toBe('…KLMz');
    for (const stop of ['/', ':', '@', '[', '`', '{']) {
      const text = `${S.slice(0, 19)}${stop}${stop}${S.slice(19)}`;
      expect(redactText(text), stop).toBe(text);
    }
  });

  it('two runs joined by exactly one other character are a secret when they add up to 37', () => {
    for (const join of ['-', '_', '.', '%', ' ']) {
      expect(redactText(`${S.slice(0, 19)}${join}${S.slice(19, 37)}`), join).toBe('…N1a2');
      expect(redactText(`x=${S.slice(0, 18)}${join}${S.slice(18, 37)};`), join).toBe('x=…N1a2;');
    }
    // 36 together, or two characters between: left alone.
    expect(redactText(`${S.slice(0, 19)}-${S.slice(19, 36)}`)).toBe(`${S.slice(0, 19)}-${S.slice(19, 36)}`);
    expect(redactText(`${S.slice(0, 19)}--${S.slice(19, 37)}`)).toBe(`${S.slice(0, 19)}--${S.slice(19, 37)}`);
    expect(redactText(`${S.slice(0, 19)}/ ${S.slice(19)}`)).toBe(`${S.slice(0, 19)}/ ${S.slice(19)}`);
  });

  it('a whole secret does not pull in the path segments around it', () => {
    expect(redactText(`/v1/keys/${S.slice(0, 37)}/orders`)).toBe('/v1/keys/…N1a2/orders');
    expect(redactText(`/v1/keys/${S}/orders/7`)).toBe('/v1/keys/…1a2B/orders/7');
  });

  it('a text that starts with exactly three other characters: a run there still joins the next', () => {
    expect(redactText(`-- ${S.slice(0, 34)}-${S.slice(34)}`)).toBe('-- …1a2B');
    expect(redactText(`---${S.slice(0, 35)}.${S.slice(35)}`)).toBe('---….a2B');
  });

  it('runs joined in a chain are one secret: the text from the first run to the last', () => {
    const tail = 'QRSTUVWXYZklmnopqrst';
    expect(redactText(`${S.slice(0, 20)}-${S.slice(20)}-${tail} ok`)).toBe('…qrst ok');
  });

  it('several secrets in one text are each redacted, the first one at the very start included', () => {
    expect(redactText(`${S} and ${S2}`)).toBe('…1a2B and …LKji');
    expect(redactText(`${S}/${S2}`)).toBe('…1a2B/…LKji');
    expect(redactText(`a ${S}, b ${S2}, c`)).toBe('a …1a2B, b …LKji, c');
  });
});

describe('redactText: runs that are not secrets', () => {
  const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
  const sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

  it('hexadecimal digits of one case are left alone, lowercase or uppercase; mixed case is a secret', () => {
    expect(redactText(sha1)).toBe(sha1);
    expect(redactText(sha256)).toBe(sha256);
    expect(redactText(sha1.toUpperCase())).toBe(sha1.toUpperCase());
    expect(redactText(`etag ${sha256.toUpperCase()}`)).toBe(`etag ${sha256.toUpperCase()}`);
    // The a and f, A and F at the ends of each case's range are hex too; g is not.
    expect(redactText('0a1f2a3f4a5f6a7f8a9f0a1f2a3f4a5f6a7f8a9f')).toBe('0a1f2a3f4a5f6a7f8a9f0a1f2a3f4a5f6a7f8a9f');
    expect(redactText('0A1F2A3F4A5F6A7F8A9F0A1F2A3F4A5F6A7F8A9F')).toBe('0A1F2A3F4A5F6A7F8A9F0A1F2A3F4A5F6A7F8A9F');
    expect(redactText('0a1f2a3f4a5f6a7f8a9f0a1f2a3f4a5f6a7f8a9g')).toBe('…8a9g');
    expect(redactText(`${sha1.slice(0, 20)}${sha1.slice(20).toUpperCase()}`)).toBe('…0709');
  });

  it('digits alone are left alone', () => {
    const digits = '0123456789'.repeat(4);
    expect(redactText(digits)).toBe(digits);
    expect(redactText(`order ${digits}9`)).toBe(`order ${digits}9`);
  });

  it('fewer than 10 distinct letters and digits are left alone; 10 are a secret', () => {
    const nine = 'ghijklmnp'.repeat(5);
    expect(redactText(nine)).toBe(nine);
    expect(redactText('x'.repeat(60))).toBe('x'.repeat(60));
    expect(redactText('ghijklmnpq'.repeat(4))).toBe('…mnpq');
    // The character joining two runs is not one of the 10.
    const joined = `${'ghijklmnp'.repeat(2)}g-${'hijklmnpg'.repeat(2)}`;
    expect(redactText(joined)).toBe(joined);
  });

  it('a run that is no secret before a secret stays, and the secret is redacted', () => {
    expect(redactText(`${sha1} ${S}`)).toBe(`${sha1} …1a2B`);
    expect(redactText(`${'x'.repeat(40)} ${S}`)).toBe(`${'x'.repeat(40)} …1a2B`);
    expect(redactText(`${S} ${sha1}`)).toBe(`…1a2B ${sha1}`);
  });
});

describe('redactText: the prefix before a `_` goes with the secret', () => {
  it('a prefix of lowercase letters, digits and `_` is taken along, from its first lowercase letter', () => {
    expect(redactText(`acme_live_${S}`)).toBe('…1a2B');
    expect(redactText(`GET /x/acme_live_${S}?a=1`)).toBe('GET /x/…1a2B?a=1');
    // z, 0, 9 and _ are prefix characters; an uppercase letter is not.
    expect(redactText(`key=zeta9_live0_${S}`)).toBe('key=…1a2B');
    expect(redactText(`key=Xacme_live_${S}`)).toBe('key=X…1a2B');
    expect(redactText(`k=_9acme_${S}`)).toBe('k=_9…1a2B');
  });

  it('a prefix is ASCII: a character past z (`~`, `{`, `ü`) ends it', () => {
    expect(redactText(`x=~acme_live_${S}`)).toBe('x=~…1a2B');
    expect(redactText(`{acme_live_${S}}`)).toBe('{…1a2B}');
    expect(redactText(`ü_${S}`)).toBe('ü_…1a2B');
    expect(redactText(`aü_${S}`)).toBe('aü_…1a2B');
  });

  it('no lowercase letter before the `_`: nothing is taken, the `_` stays', () => {
    // A secret without a lowercase letter after it: the search for the prefix's first
    // lowercase letter stops at the `_`.
    const upper = 'GHJKLMNPQRSTUVWXYZ0123456789GHJKLMNPQR';
    expect(redactText(`ID_${upper}`)).toBe('ID_…NPQR');
    expect(redactText(`id 123_${S}`)).toBe('id 123_…1a2B');
    expect(redactText(`ACME_${S}`)).toBe('ACME_…1a2B');
    expect(redactText(`x _${S}`)).toBe('x _…1a2B');
  });

  it('at most 32 characters of prefix are taken', () => {
    expect(redactText(`${'a'.repeat(40)}_${S}`)).toBe(`${'a'.repeat(8)}…1a2B`);
    expect(redactText(`${'b'.repeat(32)}_${S}`)).toBe('…1a2B');
    expect(redactText(`${'c'.repeat(33)}_${S}`)).toBe('c…1a2B');
  });

  it('a prefix never reaches back into the secret before it', () => {
    expect(redactText(`acme_live_${S}_live_${S2}`)).toBe('…1a2B_…LKji');
    expect(redactText(`${S}_${S2}`)).toBe('…1a2B_…LKji');
  });
});

describe('redactText: what is not a string, or holds no secret, comes back as it is', () => {
  it('returns the same string when there is nothing to redact', () => {
    const sentence = 'the nightly export of orders ran for 12 minutes and finished';
    expect(redactText(sentence)).toBe(sentence);
    expect(redactText('')).toBe('');
  });

  it('returns a value that is not a string untouched, without throwing', () => {
    const values = Array.from({ length: 40 }, () => S);
    expect(redactText(values as never)).toBe(values);
    expect(redactText(42 as never)).toBe(42);
    expect(redactText(undefined as never)).toBeUndefined();
  });
});

describe('decodeAsciiFully', () => {
  it('decodes ASCII escapes (%00–%7F, hex digits of either case) and keeps every other sequence as it is', () => {
    expect(decodeAsciiFully('a%41%7a%7A%2f%2F%00b')).toBe('aAzz//\u0000b');
    expect(decodeAsciiFully('%80%FF%e2%82%ac%G1%4')).toBe('%80%FF%e2%82%ac%G1%4');
    expect(decodeAsciiFully('100%')).toBe('100%');
    expect(decodeAsciiFully('%%41')).toBe('%A');
    expect(decodeAsciiFully('no escapes')).toBe('no escapes');
  });

  it('looks through 16 rounds of encoding; still encoded after them is undefined', () => {
    expect(decodeAsciiFully(encodedA(1))).toBe('A');
    expect(decodeAsciiFully(encodedA(2))).toBe('A');
    expect(decodeAsciiFully(encodedA(16))).toBe('A');
    expect(decodeAsciiFully(encodedA(17))).toBeUndefined();
  });
});

describe('redactEncodedText and containsKeyShapedText', () => {
  // c and d of the secret percent-encoded: as sent, no run is long enough; decoded, it is the secret.
  const encoded = `${S.slice(0, 12)}%63%64${S.slice(14)}`;
  // The first character encoded too: the text starts with `%`.
  const encodedFromStart = `%30${S.slice(1, 12)}%63%64${S.slice(14)}`;

  it('a key visible only once decoded is redacted, decoded', () => {
    expect(redactText(encoded)).toBe(encoded);
    expect(redactEncodedText(`/k/${encoded}`)).toBe('/k/…1a2B');
    expect(redactEncodedText(encodedFromStart)).toBe('…1a2B');
    expect(redactEncodedText(encodeOnce(encodedFromStart))).toBe('…1a2B');
    expect(redactEncodedText(`acme_live_${S}`)).toBe('…1a2B');
  });

  it('text without a key comes back byte for byte, encoded as it was', () => {
    expect(redactEncodedText('a%20b')).toBe('a%20b');
    expect(redactEncodedText('%2Forders%2F7')).toBe('%2Forders%2F7');
    expect(redactEncodedText('100% sure')).toBe('100% sure');
    expect(redactEncodedText('plain')).toBe('plain');
  });

  it('text still encoded after 16 rounds is redacted whole', () => {
    const deep = encodedA(17);
    expect(redactEncodedText(deep)).toBe(`…${deep.slice(-4)}`);
  });

  it('containsKeyShapedText: keys plain, encoded or mangled are found; words, percent signs and non-strings are not', () => {
    expect(containsKeyShapedText(`acme_live_${S}`)).toBe(true);
    expect(containsKeyShapedText(encoded)).toBe(true);
    expect(containsKeyShapedText(encodedFromStart)).toBe(true);
    expect(containsKeyShapedText(`${S.slice(0, 19)}-${S.slice(19, 37)}`)).toBe(true);
    expect(containsKeyShapedText(encodedA(17))).toBe(true);
    expect(containsKeyShapedText('nightly export')).toBe(false);
    expect(containsKeyShapedText('100% sure, 50%')).toBe(false);
    expect(containsKeyShapedText('a%20b')).toBe(false);
    expect(containsKeyShapedText(42 as never)).toBe(false);
  });
});
