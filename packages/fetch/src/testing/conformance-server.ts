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
import type { ClientAddress } from './conformance-app.ts';

/**
 * A `fetch` handler serving the conformance app over a lazily built fixture;
 * `clientAddress` reads the socket peer from what the runtime passes after the request.
 */
export function conformanceServer(clientAddress?: ClientAddress): (request: Request, platform?: unknown) => Promise<Response> {
  let ready: Promise<{ fixture: ConformanceFixture; app: (request: Request, platform?: unknown) => Promise<Response> }> | undefined;
  return async function conformanceServer(request, platform) {
    ready ??= createConformanceFixture().then((fixture) => ({ fixture, app: conformanceApp(fixture, clientAddress) }));
    const { fixture, app } = await ready;
    if (new URL(request.url).pathname === WORLD_PATH) return worldResponse(fixture);
    return app(request, platform);
  };
}
