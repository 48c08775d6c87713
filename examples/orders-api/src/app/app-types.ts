/**
 * The framework-neutral shape of the app layer: handlers take plain inputs and return
 * `{ status, headers, body }`; failures are thrown as `KeysetError`s. The server builders
 * (`server-*.ts`, one per adapter) only translate to and from these.
 * @module
 */

/** What a handler answers. `body` undefined means no body (204). */
export interface AppResponse<Body = unknown> {
  status: number;
  headers?: Record<string, string>;
  body?: Body;
}

/** A list request: the absolute URL (for `Link`) and its query, read from the raw URL. */
export interface ListInput {
  url: string;
  query: URLSearchParams;
}
