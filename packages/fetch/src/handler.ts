/**
 * The shape every Web-standard server calls: a `Request` in, a `Response` out, with
 * whatever the platform passes after the request (a Next.js route's `{ params }`, a
 * Worker's `env` and `ctx`) carried through untouched.
 * @module
 */

/** A `Request → Response` handler; `Rest` is what the platform passes after the request. */
export type FetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Response | Promise<Response>;

/** What `apiKey()` and `problemHandler()` return: a handler that always answers asynchronously. */
export type AsyncFetchHandler<Rest extends unknown[] = []> = (request: Request, ...rest: Rest) => Promise<Response>;
