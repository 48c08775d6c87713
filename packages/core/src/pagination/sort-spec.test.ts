import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { defineSortSpec } from './sort-spec.ts';
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
