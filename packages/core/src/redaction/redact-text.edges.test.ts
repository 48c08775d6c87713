/**
 * A survivor of the mutation run over `redact-text.ts` (docs/security.md, "Mutation
 * testing"): `length >= SECRET_RUN` as `length > SECRET_RUN` left a bare secret missing
 * one character (37 of its 38) in the text. The cases are the places the property test's
 * manglings did not combine with "one character lost": the start of the string, after
 * `": "` and after spaces, at either end of the secret.
 */
import { describe, expect, it } from 'vitest';
import { generateKey } from '../keys/key-format.ts';
import { redactText } from './redact-text.ts';

/** The first 8-character window of `secret` found in `text`, or `undefined`. */
function window8(text: string, secret: string): string | undefined {
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) return secret.slice(i, i + 8);
  return undefined;
}

describe('redactText: a bare secret one character short', () => {
  it.each([
    ['the whole string', (s: string) => s],
    ['the start of a string', (s: string) => `${s} was here`],
    ['after ": "', (s: string) => `{"token": "${s}"}`],
    ['after ":" with no space', (s: string) => `{"token":"${s}"}`],
    ['after spaces', (s: string) => `token   ${s}`],
  ])('at %s, cut at either end, leaves no 8 characters of it', (_where, place) => {
    for (let n = 0; n < 20; n++) {
      const key = generateKey('acme_live');
      const secret = key.slice('acme_live_'.length);
      for (const cut of [secret.slice(0, -1), secret.slice(1)]) {
        const out = redactText(place(cut));
        expect(window8(out, secret), out).toBeUndefined();
      }
    }
  });
});
