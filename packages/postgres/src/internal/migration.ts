/**
 * One version of the store's schema: SQL for the table names of a schema and prefix.
 * @module
 */
import type { TableNames } from './identifiers.ts';

/** A schema version, applied at most once and recorded in `<prefix>migrations`. */
export interface Migration {
  version: number;
  sql: (t: TableNames) => string;
}
