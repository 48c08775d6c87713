import { afterAll, beforeAll, describe, it } from 'vitest';
import { fuzzAdapter } from './testing/adapter-fuzz.ts';
import { conformanceApp } from './testing/conformance-app.ts';
import { createConformanceFixture } from './testing/conformance-fixture.ts';
import type { ConformanceFixture } from './testing/conformance-fixture.ts';

describe('hono adapter under random requests', () => {
  let fixture: ConformanceFixture;
  beforeAll(async () => {
    fixture = await createConformanceFixture();
  });
  afterAll(() => fixture.close());

  it('never answers 5xx, and every 4xx is a problem with a code (2000 requests)', async () => {
    const app = conformanceApp(fixture);
    await fuzzAdapter(async (path, init) => app.request(path, init), fixture, 2000);
  }, 60_000);
});
