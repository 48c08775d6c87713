/**
 * `parseWithModes` against the pagination rules (docs/pagination.md), written out as an
 * oracle over the query's entries: each of `limit`, `offset`, `cursor` (checked in that order) at most
 * once and never empty, `limit` and `offset` canonical safe integers, never both `cursor`
 * and `offset`, and only the endpoint's modes. Random queries mix repeated, empty,
 * near-miss and percent-encoded names with bad numbers; the parser must give the oracle's
 * page query, or refuse with the oracle's code and parameter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKeysetError } from '../errors.ts';
import { parseWithModes, resolveModes } from './page-query.ts';

type Modes = ReturnType<typeof resolveModes>;

function outcome(query: URLSearchParams, modes: Modes): unknown {
  try {
    return { ok: parseWithModes(query, modes) };
  } catch (err) {
    if (!isKeysetError(err)) throw err;
    return { code: err.code, extensions: err.extensions };
  }
}

/** What the rules say the query means, from its decoded entries. */
function oracle(text: string, { defaultMode, modes }: Modes): unknown {
  const entries = [...new URLSearchParams(text)];
  const values = (name: string): string[] => entries.filter(([n]) => n === name).map(([, v]) => v);
  const refused = (code: string, parameter: string) => ({ code, extensions: { parameter } });
  const found: Record<string, string | undefined> = {};
  for (const [name, code, pattern] of [
    ['limit', 'invalid_limit', /^[1-9][0-9]*$/],
    ['offset', 'invalid_offset', /^(0|[1-9][0-9]*)$/],
    ['cursor', 'invalid_cursor', /./],
  ] as const) {
    const given = values(name);
    if (given.length > 1 || given[0] === '') return refused(code, name);
    const value = given[0];
    if (value !== undefined && (!pattern.test(value) || (name !== 'cursor' && Number(value) > Number.MAX_SAFE_INTEGER))) return refused(code, name);
    found[name] = value;
  }
  const { limit, offset, cursor } = found;
  if (cursor !== undefined && offset !== undefined) return { code: 'conflicting_pagination', extensions: { parameters: ['cursor', 'offset'] } };
  const mode = cursor !== undefined ? 'cursor' : offset !== undefined ? 'offset' : defaultMode;
  if (!modes.includes(mode)) return refused('invalid_request', mode);
  const limitNumber = limit === undefined ? undefined : Number(limit);
  return { ok: mode === 'cursor' ? { mode, limit: limitNumber, cursor: cursor ?? null } : { mode, limit: limitNumber, offset: Number(offset ?? 0) } };
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

describe('parseWithModes', () => {
  it('reads and refuses what the rules say, in their order', () => {
    fc.assert(
      fc.property(query, modes, (text, m) => {
        expect(outcome(new URLSearchParams(text), m)).toEqual(oracle(text, m));
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
