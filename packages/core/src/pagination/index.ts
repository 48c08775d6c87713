/** Public exports of the pagination area. Names are listed explicitly. */
export { normalizeBaseUrl } from './base-url.ts';
export { createCursorCodec } from './cursor-codec.ts';
export { cursorSecrets } from './cursor-secrets.ts';
export { cursorFingerprint } from './cursor-fingerprint.ts';
export { keysetWhere } from './keyset-where.ts';
export { createLimitPolicy } from './limit-policy.ts';
export { pageItems } from './page-items.ts';
export { pageLinks } from './page-links.ts';
export { paginateArray } from './paginate-array.ts';
export { createPaginator } from './paginator.ts';
export { parsePageQuery } from './parse-page-query.ts';
export { createSortParam } from './sort-param.ts';
export { defineSortSpec, fetchSort, reverseSortSpec } from './sort-spec.ts';
export { countTotal, resolveTotalPolicy, settleTotal } from './total-policy.ts';

export type { CursorCodec, CursorCodecOptions, DecodedCursor } from './cursor-codec.ts';
export type { CursorSecretsOptions } from './cursor-secrets.ts';
export type { CursorScope } from './cursor-fingerprint.ts';
export type { KeysetQuery, KeysetWhereOptions, SqlDialect } from './keyset-where.ts';
export type { LimitResolver } from './limit-policy.ts';
export type { PageLinkTarget, PageRel } from './page-links.ts';
export type { PageOptions, PageResult, Paginator, PaginatorOptions, PlanOptions } from './paginator.ts';
export type { PageQuery, ParsePageQueryOptions } from './parse-page-query.ts';
export type { SortableField, SortParam } from './sort-param.ts';
export type { CountedTotal, SettledTotal, TotalCounters, TotalOption, TotalPolicy } from './total-policy.ts';
export type {
  CursorDirection,
  CursorPage,
  CursorPosition,
  LimitPolicy,
  OffsetPage,
  PagePlan,
  PaginationMode,
  SortDirection,
  SortKey,
  SortSpec,
  SortValue,
  SortValueType,
} from './types.ts';
