/**
 * `parseWithModes` reads a runtime URLSearchParams in one pass (forEach) and anything else
 * with three getAll calls, as it always did. This holds the two paths to each other on
 * random queries: the same page query, or the same error (code, detail, extensions).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKeysetError } from '../errors.ts';
import { parseWithModes, resolveModes } from './parse-page-query.ts';

/** The same parameters behind a getAll of its own: the three-getAll path. */
function viaGetAll(text: string): URLSearchParams {
  const query = new URLSearchParams(text);
  Object.defineProperty(query, 'getAll', { value: (name: string) => URLSearchParams.prototype.getAll.call(query, name) });
  return query;
}

function outcome(query: URLSearchParams, modes: ReturnType<typeof resolveModes>): unknown {
  try {
    return { ok: parseWithModes(query, modes) };
  } catch (err) {
    if (!isKeysetError(err)) throw err;
    return { code: err.code, detail: err.detail, extensions: err.extensions };
  }
}

const name = fc.constantFrom('limit', 'offset', 'cursor', 'status', 'Limit', 'cursor ', 'limit%00', 'curs%6Fr', '');
const value = fc.constantFrom('', '1', '20', '0', '05', '-1', '1e3', '9007199254740991', '9007199254740992', 'abc', 'AnsiZCI6', '%20', '+');
const query = fc.array(fc.tuple(name, value, fc.boolean()), { maxLength: 6 }).map((parts) => parts.map(([n, v, eq]) => (eq ? `${n}=${v}` : n)).join('&'));
const modes = fc.constantFrom(
  resolveModes({}),
  resolveModes({ modes: ['cursor'] }),
  resolveModes({ modes: ['offset'], defaultMode: 'offset' }),
  resolveModes({ defaultMode: 'offset' }),
);

describe('parseWithModes: one pass over a URLSearchParams', () => {
  it('reads and refuses exactly what the three getAll calls do', () => {
    fc.assert(
      fc.property(query, modes, (text, m) => {
        const fast = new URLSearchParams(text);
        expect(fast.getAll).toBe(URLSearchParams.prototype.getAll);
        expect(outcome(fast, m)).toEqual(outcome(viaGetAll(text), m));
      }),
      { numRuns: 5000 },
    );
  });

  it('asks a query with a getAll of its own through it', () => {
    const seen: string[] = [];
    const query = new URLSearchParams('limit=5&cursor=abc');
    Object.defineProperty(query, 'getAll', { value: (name: string) => (seen.push(name), name === 'limit' ? ['7'] : []) });
    expect(parseWithModes(query, resolveModes({}))).toEqual({ mode: 'cursor', limit: 7, cursor: null });
    expect(seen).toEqual(['limit', 'offset', 'cursor']);
  });
});
