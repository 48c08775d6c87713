/**
 * The edges of `redactRuns`: a non-string is the empty string (never a crash in a log
 * call), and text with no 8 letters and digits in a row is returned as sent, its
 * percent-encoding kept, even when it holds shorter runs.
 */
import { describe, expect, it } from 'vitest';
import { redactRuns } from './redact-runs.ts';

describe('redactRuns edges', () => {
  it.each([undefined, null, 12345678901, ['abcdefghijkl']])('gives the empty string for the non-string %j', (value) => {
    expect(redactRuns(value as never)).toBe('');
  });

  it('returns text with runs of at most 7 as sent, encoded or not', () => {
    expect(redactRuns('status=paid')).toBe('status=paid');
    expect(redactRuns('a%20b')).toBe('a%20b');
    expect(redactRuns('abcdefg%2Fhijklmn')).toBe('abcdefg%2Fhijklmn');
    expect(redactRuns('')).toBe('');
  });

  it('cuts a run of exactly 8 to its first 3 and last 4', () => {
    expect(redactRuns('abcdefgh')).toBe('abc…efgh');
    expect(redactRuns('x=abcdefg')).toBe('x=abcdefg');
  });

  it('returns text that needs a change decoded', () => {
    expect(redactRuns('a%20windowSecond')).toBe('a win…cond');
    expect(redactRuns('abcd%41efgh')).toBe('abc…efgh');
  });
});
