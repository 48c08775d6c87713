/**
 * The row property through which a query helper hands the paginator a row's sort values
 * as it read them itself, losslessly (timestamps, bigints and decimals as database text),
 * whatever the driver makes of the columns the user selected. `@keyset/kysely` sets it
 * (non-enumerable: the user's row keeps its shape); a `@keyset/drizzle` select carries it
 * as a nested object (`...page.select`). `Paginator.page` reads cursors from it and leaves
 * it out of the items it returns.
 * @module
 */

/** Name of the property: an object of cursor values by sort key (`{ createdAt: '2025-…', id: '9007…' }`). */
export const SORT_VALUES_FIELD = 'keysetSortValues';

/** The row's exact sort values, when a query helper attached them. */
export function exactSortValues(row: object): Readonly<Record<string, unknown>> | undefined {
  if (!Object.hasOwn(row, SORT_VALUES_FIELD)) return undefined;
  const values = (row as Record<string, unknown>)[SORT_VALUES_FIELD];
  return typeof values === 'object' && values !== null ? (values as Record<string, unknown>) : undefined;
}

/**
 * `items` without the enumerable sort-values property (a Drizzle select's): each such
 * item shallow-copied without it, so a response body shows only the user's fields.
 */
export function withoutSortValues<Row>(items: Row[]): Row[] {
  const first = items[0];
  if (typeof first !== 'object' || first === null || !Object.prototype.propertyIsEnumerable.call(first, SORT_VALUES_FIELD)) return items;
  return items.map((item) => {
    const { [SORT_VALUES_FIELD]: _, ...rest } = item as Record<string, unknown>;
    return rest as Row;
  });
}
