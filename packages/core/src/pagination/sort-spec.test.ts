import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { defineSortSpec, reverseSortSpec } from './sort-spec.ts';
import type { SortKey } from './types.ts';

const id: SortKey = { key: 'id', dir: 'asc', type: 'bigint', unique: true };

describe('defineSortSpec', () => {
  it('fills in defaults and freezes', () => {
    const spec = defineSortSpec([{ key: 'createdAt', column: 'o.created_at', dir: 'desc', type: 'timestamp' }, id]);
    expect(spec).toEqual([
      { key: 'createdAt', column: 'o.created_at', dir: 'desc', type: 'timestamp', nullable: false, unique: false },
      { key: 'id', column: 'id', dir: 'asc', type: 'bigint', nullable: false, unique: true },
    ]);
    expect(Object.isFrozen(spec) && Object.isFrozen(spec[0])).toBe(true);
    expect(defineSortSpec(spec)).toBe(spec);
  });

  it('reverses a spec: directions and null placement flipped, frozen, the same object each time, back again to the original', () => {
    const spec = defineSortSpec([{ key: 'score', dir: 'desc', type: 'decimal', nullable: { nulls: 'last' } }, id]);
    const back = reverseSortSpec(spec);
    expect(back).toEqual([
      { key: 'score', column: 'score', dir: 'asc', type: 'decimal', nullable: { nulls: 'first' }, unique: false },
      { key: 'id', column: 'id', dir: 'desc', type: 'bigint', nullable: false, unique: true },
    ]);
    expect(Object.isFrozen(back) && Object.isFrozen(back[0]) && Object.isFrozen(back[0]?.nullable)).toBe(true);
    expect(reverseSortSpec(spec)).toBe(back);
    expect(reverseSortSpec(back)).toBe(spec);
    expect(defineSortSpec(back)).toBe(back);
    // A spec not made by defineSortSpec is validated first (and refused when bad).
    expect(reverseSortSpec([{ ...id }])).toEqual([{ ...id, column: 'id', nullable: false, dir: 'desc' }]);
    expect(() => reverseSortSpec([{ key: 'n', dir: 'asc', type: 'string' }])).toThrow(ConfigError);
    // Nothing extra shows: the reverse is not an enumerable member.
    expect(Object.keys(spec)).toEqual(['0', '1']);
    expect(JSON.stringify(spec)).toBe(JSON.stringify(defineSortSpec([...spec.map((k) => ({ ...k }))])));
  });

  it('accepts mixed directions and nullable keys before the unique one', () => {
    expect(() =>
      defineSortSpec([
        { key: 'score', dir: 'desc', type: 'decimal', nullable: { nulls: 'last' } },
        { key: 'name', dir: 'asc', type: 'string', nullable: { nulls: 'first' } },
        id,
      ]),
    ).not.toThrow();
  });

  it.each<[string, SortKey[], RegExp]>([
    ['empty', [], /non-empty/],
    ['last key not unique', [{ key: 'id', dir: 'asc', type: 'int' }], /unique: true and non-null/],
    ['last key nullable', [{ ...id, nullable: { nulls: 'last' } }], /non-null/],
    ['duplicate key', [{ key: 'id', dir: 'desc', type: 'int' }, id], /appears twice/],
    ['duplicate column', [{ key: 'a', column: 'id', dir: 'desc', type: 'int' }, id], /appears twice/],
    ['bad direction', [{ ...id, dir: 'up' as 'asc' }], /dir/],
    ['bad type', [{ ...id, type: 'uuid' as 'string' }], /type/],
    ['bad nulls', [{ key: 'a', dir: 'asc', type: 'int', nullable: { nulls: 'middle' as 'first' } }, id], /nullable/],
    ['nullable: true', [{ key: 'a', dir: 'asc', type: 'int', nullable: true as unknown as false }, id], /nullable/],
    ['injected column', [{ ...id, column: 'id; DROP TABLE x' }], /column/],
    ['quoted column', [{ ...id, column: '"id"' }], /column/],
    ['key not an identifier and no column', [{ ...id, key: 'created-at' }], /set `column`/],
  ])('refuses %s with ConfigError', (_, keys, message) => {
    expect(() => defineSortSpec(keys)).toThrow(ConfigError);
    expect(() => defineSortSpec(keys)).toThrow(message);
  });
});
