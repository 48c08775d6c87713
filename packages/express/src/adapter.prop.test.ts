import { afterAll, beforeAll, describe, it } from 'vitest';
import { fuzzAdapter } from '../../hono/src/testing/adapter-fuzz.ts';
import { createConformanceFixture } from '../../hono/src/testing/conformance-fixture.ts';
import type { ConformanceFixture } from '../../hono/src/testing/conformance-fixture.ts';
import { conformanceApp } from './testing/conformance-app.ts';
import { listen } from './testing/listen.ts';

describe('express adapter under random requests, over a kept-alive socket', () => {
  let fixture: ConformanceFixture;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    fixture = await createConformanceFixture();
    server = await listen(conformanceApp(fixture));
  });
  afterAll(async () => {
    await server.close();
    await fixture.close();
  });

  it('never answers 5xx, and every 4xx is a problem with a code (2000 requests)', async () => {
    await fuzzAdapter((path, init) => fetch(`${server.origin}${path}`, init), fixture, 2000);
  }, 60_000);
});
