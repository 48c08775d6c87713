/**
 * The conformance app as one `fetch` function for a server under another runtime: it
 * builds its fixture on the first request (workerd forbids random numbers at start-up)
 * and answers `WORLD_PATH` so the test process learns the keys and the reported errors.
 * Imports nothing from Node: bundled for Bun, Deno and workerd. Test support only.
 * @module
 */
import { createConformanceFixture, WORLD_PATH, worldResponse } from '@keyset/conformance/fixture';
import type { ConformanceFixture } from '@keyset/conformance/fixture';
import { conformanceApp } from './conformance-app.ts';

/** A `fetch` handler serving the conformance app over a lazily built fixture. */
export function conformanceServer(): (request: Request) => Promise<Response> {
  let ready: Promise<{ fixture: ConformanceFixture; app: (request: Request) => Promise<Response> }> | undefined;
  return async function conformanceServer(request) {
    ready ??= createConformanceFixture().then((fixture) => ({ fixture, app: conformanceApp(fixture) }));
    const { fixture, app } = await ready;
    if (new URL(request.url).pathname === WORLD_PATH) return worldResponse(fixture);
    return app(request);
  };
}
