/**
 * One HTTP conformance suite for every keyset adapter: pagination, API keys, options,
 * in-flight limits and problems, a file each, registered here. Each adapter's test starts
 * the same app (in process, or as a server under another runtime) and hands over a way to
 * send requests and the world the app serves; the suite asserts status, headers and bodies.
 * Test support only: this package is private and never published.
 *
 * The app under test must serve, with the adapter's own middleware:
 * - `GET /items`: `apiKey({ guard, scopes: ['items:read'] })`, then
 *   `paginate(paginator, { filters: fixture.filters(query) })`, then
 *   `sendPage(fixture.list(plan, query).rows, { total })`;
 * - `GET /public/items`: the same without `apiKey`;
 * - `GET /whoami`: `apiKey({ guard })`, answering `{ id, name, last4 }` of the verified key;
 * - `GET /permitted`: `apiKey({ guard, permissions: PERMITTED_QUERY })`, answering `{ name }` of the verified key;
 * - `GET /whoami/any-scheme`: the same with `apiKey({ guard: fixture.anySchemeGuard })`;
 * - `GET /down`: `apiKey({ guard: fixture.downGuard })` (its key store is unreachable);
 * - `POST /echo`: `apiKey({ guard })`, then parsing the JSON body and answering `{ received }`;
 *   a body over `MAX_ECHO_BYTES` is 413, as the framework's body limit answers it;
 * - `GET /query`: `paginate(paginator)`, answering the framework's own parsed query as JSON;
 * - `GET /throws`: throws `new Error('boom: secret detail')`;
 * - `GET /options/peer`: `apiKey({ guard, clientAddress: () => OPTION_PEER })`, answering `{ name }`;
 * - `GET /options/proxied`: `apiKey({ guard: fixture.proxyGuard })`, answering `{ name }`;
 * - `GET /options/page`: `paginate(paginator, { filters: (query, request) => ({ tenant }) })`,
 *   `tenant` the request's `X-Tenant` header read from the framework's request, then
 *   `sendPage(rows, { headers: { 'cache-control': 'no-store', link: 'ignored' } })`;
 * - `GET /inflight/throws`: `apiKey({ guard })`, then throws `new Error('boom after admission')`;
 * - `GET /inflight/stream`: `apiKey({ guard })`, then answers `inflightStream(inflightChunks(query))`
 *   as a streamed `text/plain` body;
 * - `GET /inflight/slow`: `apiKey({ guard })`, then waits until the client goes away;
 * - `GET, POST, OPTIONS, DELETE /inflight/status` (and `HEAD` as the framework derives it
 *   from `GET`): `apiKey({ guard })`, then answers `inflightStatus(query)`;
 * - `GET /inflight/rejects`: `apiKey({ guard })`, then an `async` handler that rejects with an `Error`;
 * - `GET /inflight/throws-value`: `apiKey({ guard })`, then throws a string (no `Error`);
 * - `GET /inflight/rethrown` and `GET /inflight/non-error`: `apiKey({ guard })`, then throw
 *   `new Error(RETHROWN)` / `new Error(NON_ERROR)`; the app's error handler rethrows the
 *   first and throws a string for the second;
 * - not-found and problem handlers (the not-found one answering 405 with `Allow` for a known
 *   path under another method), the latter pushing `{ error, status }` to `fixture.reported`.
 * @module
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { describeApiKeyConformance } from './api-key-conformance.ts';
import { auth } from './conformance-run.ts';
import type { ConformanceRun } from './conformance-run.ts';
import { describeInFlightConformance } from './in-flight-conformance.ts';
import { describeOptionConformance } from './option-conformance.ts';
import { describePaginationConformance } from './pagination-conformance.ts';
import { describeProblemConformance } from './problem-conformance.ts';
import type { AdapterUnderTest, RunningApp } from './world.ts';

/** Registers the suite under `describe(name)`: one app started for all its checks. */
export function describeAdapterConformance(name: string, adapter: AdapterUnderTest): void {
  describe(`adapter conformance: ${name}`, () => {
    let app: RunningApp | undefined;
    const running = (): RunningApp => {
      if (app === undefined) throw new Error('the conformance app starts in beforeAll: read it inside a test');
      return app;
    };
    const run: ConformanceRun = {
      adapter,
      get fixture() {
        return running().world;
      },
      get reader() {
        return auth(running().world.keys.reader);
      },
      get: (path, init) => running().request(path, init),
    };

    beforeAll(async () => {
      app = await adapter.start();
    });
    afterAll(async () => {
      await app?.close();
    });

    describePaginationConformance(run);
    describeApiKeyConformance(run);
    describeOptionConformance(run);
    // An adapter's test server must end every connection when it closes: the in-flight
    // checks leave the client a kept-alive socket it never sent a request on, which Node
    // counts as busy until its headers timeout (Fastify: `forceCloseConnections: true`).
    describeInFlightConformance(run);
    describeProblemConformance(run);
  });
}
