/**
 * The edges of `keysetWhere` the SQL-text tests left open: the exact `TypeError` of each
 * refusal (an unknown dialect, a bad `paramOffset`, a plan whose cursor values do not fit
 * the spec), and placeholders past the ninth (a spec of eleven keys). Found by the
 * mutation run over `keyset-where.ts` (docs/security.md, "Mutation testing").
 */
import { describe, expect, it } from 'vitest';
import { keysetWhere } from './keyset-where.ts';
import { defineSortSpec } from './sort-spec.ts';
import type { CursorPosition, PagePlan, SortSpec } from './types.ts';

const plan = (after: CursorPosition | null, sort: SortSpec): PagePlan => ({ mode: 'cursor', limit: 10, take: 11, direction: 'forward', after, sort, fingerprint: 'fp' });
const spec = defineSortSpec([
  { key: 'score', dir: 'desc', type: 'int' },
  { key: 'id', dir: 'desc', type: 'int', unique: true },
]);

describe('keysetWhere: refusals, word for word', () => {
  it('an unknown dialect', () => {
    expect(() => keysetWhere(plan(null, spec), spec, 'oracle' as never)).toThrow(new TypeError('unknown SQL dialect oracle'));
  });

  it('a paramOffset that is not a whole number from 0', () => {
    for (const paramOffset of [-1, 1.5, Number.NaN]) {
      expect(() => keysetWhere(plan([5, 1], spec), spec, 'postgres', { paramOffset }), String(paramOffset)).toThrow(new TypeError('paramOffset must be a non-negative integer'));
    }
    expect(keysetWhere(plan([5, 1], spec), spec, 'postgres', { paramOffset: 0 }).where).toBe('("score", "id") < ($1, $2)');
  });

  it('cursor values that do not fit the spec: too few, too many, or of the wrong type', () => {
    const message = new TypeError('plan.after does not match the sort spec (one cursor-form value per key)');
    expect(() => keysetWhere(plan([5], spec), spec, 'postgres')).toThrow(message);
    expect(() => keysetWhere(plan([5, 1, 2], spec), spec, 'sqlite')).toThrow(message);
    expect(() => keysetWhere(plan([5, 'x'], spec), spec, 'mysql')).toThrow(message);
  });
});

describe('keysetWhere: many keys', () => {
  it('numbers placeholders past the ninth, in every dialect', () => {
    const keys = Array.from({ length: 11 }, (_, i) => ({ key: `k${i}`, dir: 'asc' as const, type: 'int' as const, ...(i === 10 ? { unique: true } : {}) }));
    const wide = defineSortSpec(keys);
    const values = keys.map((_, i) => i);
    const { where, params } = keysetWhere(plan(values, wide), wide, 'postgres');
    expect(where).toBe(`(${keys.map((k) => `"${k.key}"`).join(', ')}) > (${keys.map((_, i) => `$${i + 1}`).join(', ')})`);
    expect(params).toEqual(values);
    const sqlite = keysetWhere(plan(values, wide), wide, 'sqlite');
    expect(sqlite.where).toBe(`(${keys.map((k) => `"${k.key}"`).join(', ')}) > (${keys.map(() => '?').join(', ')})`);
    expect(sqlite.params).toEqual(values);
    const mysql = keysetWhere(plan(values, wide), wide, 'mysql');
    expect(mysql.where).not.toMatch(/\u0000/);
    expect(mysql.where).toContain('`k10` > ?');
  });
});
