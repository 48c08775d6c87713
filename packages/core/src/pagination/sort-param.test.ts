import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, isKeysetError } from '../errors.ts';
import { createSortParam, type SortableField } from './sort-param.ts';
import { defineSortSpec } from './sort-spec.ts';

const defaultSort = defineSortSpec([
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
]);
const fields: SortableField[] = [
  { name: 'createdAt', column: 'created_at', type: 'timestamp' },
  { name: 'amountCents', column: 'amount_cents', type: 'int' },
  { name: 'note', type: 'string', nullable: { nulls: 'last' } },
  { name: 'id', type: 'bigint', unique: true },
];
const param = createSortParam(fields, defaultSort);
const order = (sort: string): string[] =>
  param.resolve(new URLSearchParams({ sort })).map((k) => `${k.dir === 'desc' ? '-' : ''}${k.key}${k.column === k.key ? '' : `(${k.column})`}`);

function refusal(query: string): Record<string, unknown> {
  try {
    param.resolve(new URLSearchParams(query));
  } catch (err) {
    expect(isKeysetError(err)).toBe(true);
    expect(err).toMatchObject({ status: 400, code: 'invalid_sort', extensions: { parameter: 'sort', sortable: ['createdAt', 'amountCents', 'note', 'id'] } });
    return { detail: (err as Error).message };
  }
  throw new Error(`accepted ${query}`);
}

describe('createSortParam', () => {
  it('no sort parameter: the default order, as the same object', () => {
    expect(param.resolve(new URLSearchParams('limit=2'))).toBe(defaultSort);
  });

  it('appends the tie-breaker in the direction of the last field, when no unique field is given', () => {
    expect(order('-createdAt')).toEqual(['-createdAt(created_at)', '-id']);
    expect(order('amountCents')).toEqual(['amountCents(amount_cents)', 'id']);
    expect(order('amountCents,-createdAt')).toEqual(['amountCents(amount_cents)', '-createdAt(created_at)', '-id']);
    expect(order('amountCents,-id')).toEqual(['amountCents(amount_cents)', '-id']);
    expect(order('-note')).toEqual(['-note', '-id']);
  });

  it('a unique field ends the order: fields after it cannot change it and are dropped', () => {
    expect(order('id')).toEqual(['id']);
    expect(order('-id,createdAt')).toEqual(['-id']);
  });

  it('keeps null placement and types of the declared field', () => {
    const [note] = param.resolve(new URLSearchParams('sort=-note'));
    expect(note).toMatchObject({ key: 'note', type: 'string', dir: 'desc', nullable: { nulls: 'last' } });
  });

  it.each([
    ['sort=', /must not be empty/],
    ['sort=price', /has an unknown field\. /],
    ['sort=createdAt,createdAt', /names "createdAt" twice/],
    ['sort=-createdAt,createdAt', /names "createdAt" twice/],
    ['sort=createdAt,', /has a malformed field\. /],
    ['sort=,id', /has a malformed field\. /],
    ['sort=--id', /has a malformed field\. /],
    ['sort=-', /has a malformed field\. /],
    ['sort=+id', /has a malformed field\. /],
    ['sort=id%20', /has a malformed field\. /],
    ['sort=ID', /has an unknown field\. /],
    ['sort=id&sort=-id', /at most once/],
    [`sort=${'a'.repeat(600)}`, /longer than 512/],
  ])('%s → 400 invalid_sort naming the allowed fields', (query, detail) => {
    const { detail: text } = refusal(query);
    expect(text).toMatch(detail);
    expect(text).toContain('createdAt, amountCents, note, id');
    // What was sent is not quoted (only names the endpoint declared are).
    expect(text).not.toMatch(/price|"ID"|""|"-"|" id"|"id "|--id/);
  });

  it('any sort value is a valid total order or invalid_sort, never another error', () => {
    const term = fc.oneof(fc.constantFrom('createdAt', '-createdAt', 'amountCents', '-amountCents', 'note', '-note', 'id', '-id'), fc.string({ maxLength: 8 }));
    fc.assert(
      fc.property(fc.array(term, { maxLength: 6 }), (terms) => {
        const raw = terms.join(',');
        try {
          const spec = param.resolve(new URLSearchParams({ sort: raw }));
          expect(spec.at(-1)).toMatchObject({ unique: true, nullable: false });
          expect(new Set(spec.map((k) => k.key)).size).toBe(spec.length);
        } catch (err) {
          expect(err).toMatchObject({ code: 'invalid_sort' });
        }
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    [[], /non-empty/],
    [[{ name: 'bad name', type: 'int' }], /name must match/],
    [[{ name: 'a', type: 'int' }, { name: 'a', type: 'string' }], /appears twice/],
    [[{ name: 'a', column: 'x', type: 'int' }, { name: 'b', column: 'x', type: 'int' }], /column "x" appears twice/],
    [[{ name: 'a', type: 'float' }], /type must be one of/],
    [[{ name: 'a', column: 'x;drop', type: 'int' }], /must match/],
    [[{ name: 'id', type: 'bigint' }], /tie-breaker's name/],
    [[{ name: 'ident', column: 'id', type: 'bigint', nullable: { nulls: 'first' } }], /tie-breaker's column/],
  ] as [SortableField[], RegExp][])('refuses bad sortable fields %# with ConfigError', (bad, message) => {
    expect(() => createSortParam(bad, defaultSort)).toThrow(ConfigError);
    expect(() => createSortParam(bad, defaultSort)).toThrow(message);
  });
});
