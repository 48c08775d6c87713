/**
 * What the sections of the adapter conformance suite share: the adapter under test and the
 * app it started. Test support only.
 * @module
 */
import type { AdapterUnderTest, ConformanceWorld } from './world.ts';

/**
 * One run of the suite over one adapter. The app starts in the suite's `beforeAll`, after
 * every section registered its tests: read `fixture` and `reader` inside a test, never
 * while registering one.
 */
export interface ConformanceRun {
  readonly adapter: AdapterUnderTest;
  /** The world the running app serves. */
  readonly fixture: ConformanceWorld;
  /** `Authorization: ApiKey` with the fixture's reader key. */
  readonly reader: RequestInit;
  /** Sends one request to the running app. */
  get(path: string, init?: RequestInit): Promise<Response>;
}

/** Request options carrying `key` as `Authorization: ApiKey <key>`. */
export const auth = (key: string): RequestInit => ({ headers: { authorization: `ApiKey ${key}` } });
