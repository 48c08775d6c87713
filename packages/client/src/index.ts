/**
 * @keyset/client: walk paginated HTTP collections (cursor, offset or Link header).
 * @module
 */
export { pages, paginate, retryAfterSeconds } from './paginate.ts';
export type { Page, PaginateOptions } from './paginate.ts';
export { findLink } from './link-header.ts';
export { PaginationCycleError, PaginationFormatError, PaginationHttpError } from './errors.ts';
