/**
 * The order of `Keyring.list`: newest first, `id` as the unique tie-breaker. Pass it as
 * the `sort` of `createPaginator` so the paginator's cursors match the store's order.
 * @module
 */

/** Shape of `keyListSort`, a valid pagination `SortSpec`. */
export type KeyListSort = readonly [
  { readonly key: 'createdAt'; readonly dir: 'desc'; readonly type: 'timestamp'; readonly precision: 'ms' },
  { readonly key: 'id'; readonly dir: 'desc'; readonly type: 'string'; readonly unique: true },
];

/**
 * `createdAt DESC, id DESC`, as a pagination sort spec.
 *
 * @example
 * ```ts
 * const keysPaginator = createPaginator<KeyRecord>({ endpoint: 'GET /api/keys', sort: keyListSort, cursor: { secrets } });
 * const plan = await keysPaginator.plan(url.searchParams);
 * const { records, total } = await createKeyAdmin(keyring).list(plan);
 * const page = await keysPaginator.page(plan, records, total === undefined ? { url } : { url, total });
 * ```
 */
export const keyListSort: KeyListSort = Object.freeze([
  // Written from JS Dates (the store's clock), so milliseconds are all it holds: a Date is exact.
  Object.freeze({ key: 'createdAt', dir: 'desc', type: 'timestamp', precision: 'ms' }),
  Object.freeze({ key: 'id', dir: 'desc', type: 'string', unique: true }),
] as const);
