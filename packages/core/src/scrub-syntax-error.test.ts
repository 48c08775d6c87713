import { describe, expect, it } from 'vitest';
import { scrubSyntaxError } from './scrub-syntax-error.ts';

const KEY = 'acme_live_0123456789abcdefghijABCDEFGHIJ01abcDEF';

describe('scrubSyntaxError', () => {
  it("removes the parser's excerpt of the body, keeping the stack frames", () => {
    let thrown: SyntaxError | undefined;
    try {
      JSON.parse(`{"key": "${KEY}",`);
    } catch (error) {
      thrown = error as SyntaxError;
    }
    const scrubbed = scrubSyntaxError(thrown!);
    expect(scrubbed).toBeInstanceOf(SyntaxError);
    expect(`${scrubbed.message} ${scrubbed.stack}`).not.toContain(KEY.slice(-10));
    expect(scrubbed.stack).toMatch(/\n\s+at /);
  });

  it("drops body-parser's `body` and keeps its type, status and expose", () => {
    const error = Object.assign(new SyntaxError(`Unexpected token } in JSON at position 3: "${KEY}"`), { type: 'entity.parse.failed', status: 400, statusCode: 400, expose: true, body: KEY });
    const scrubbed = scrubSyntaxError(error) as SyntaxError & Record<string, unknown>;
    expect(scrubbed).toMatchObject({ type: 'entity.parse.failed', status: 400, statusCode: 400, expose: true });
    expect(scrubbed.body).toBeUndefined();
    expect(scrubbed.message).not.toContain(KEY);
  });

  it('returns an error that quotes nothing as it is', () => {
    const error = new SyntaxError('Unexpected end of JSON input');
    expect(scrubSyntaxError(error)).toBe(error);
  });
});
