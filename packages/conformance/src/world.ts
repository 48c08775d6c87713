/**
 * The adapter-neutral side of the conformance kit: how a test reaches an app under test
 * (a request function), and what it knows of the world the app serves. No vitest here, so
 * a server process may import it too. Test support only.
 * @module
 */
import { conformanceItems, createConformanceFixture, WORLD_PATH } from './fixture.ts';
import type { ConformanceFixture, Item, WorldReport } from './fixture.ts';

/** One error the app's problem handler reported through `onError`. */
export interface Reported {
  readonly status: number;
  readonly message: string;
}

/**
 * What the suite sees of the world an app serves: the same 47 items everywhere, the keys
 * its keyring issued, and the errors its problem handler reported. An app running in
 * another process or runtime reports these over HTTP (see `remoteWorld`).
 */
export interface ConformanceWorld {
  readonly items: readonly Item[];
  readonly keys: ConformanceFixture['keys'];
  readonly foreignKey: string;
  /** Every error reported so far, oldest first (after a response, its report is in). */
  reports(): Promise<Reported[]>;
}

/** Sends one request to the app under test; `path` carries the query, or is an absolute URL of the app. */
export type SendRequest = (path: string, init?: RequestInit) => Promise<Response>;

/** A running conformance app. */
export interface RunningApp {
  readonly world: ConformanceWorld;
  request: SendRequest;
  close(): Promise<void>;
}

/** What an adapter's test provides: a factory for a fresh running app. */
export interface AdapterUnderTest {
  /** Starts a fresh app with its own world (keys, limiter, reports). */
  start(): Promise<RunningApp>;
  /** What `GET /query?limit=2&a[b]=c&x=1&x=2` answers: the framework's parsed query, untouched. */
  parsedQuery: unknown;
  /**
   * The client address the adapter hands the guard: `'loopback'` when requests arrive over
   * a local socket, `'unknown'` when there is none (an in-process `app.request`), where keys
   * with an IP allowlist must be refused.
   * @default 'loopback'
   */
  peer?: 'loopback' | 'unknown';
  /**
   * Whether a client that goes away reaches the app: the server cancels the response body
   * or aborts `request.signal`. `false` for a local `workerd serve`, where it does neither,
   * so an in-flight lease of such a request is held until its TTL; the suite's two
   * client-gone cases are skipped there.
   * @default true
   */
  seesClientGone?: boolean;
}

/** The world of an in-process fixture. */
export function fixtureWorld(fixture: ConformanceFixture): ConformanceWorld {
  return {
    items: fixture.items,
    keys: fixture.keys,
    foreignKey: fixture.foreignKey,
    reports: () => Promise.resolve(fixture.reported.map(({ error, status }) => ({ status, message: error instanceof Error ? error.message : String(error) }))),
  };
}

/** Sends requests over real HTTP to `origin` (`http://host:port`). */
export function overHttp(origin: string): SendRequest {
  return (path, init) => fetch(new URL(path, origin), init);
}

/**
 * Builds a factory for apps that run in this process: a fresh fixture per start, handed to
 * `serve`, which answers how to send requests and how to stop; the fixture closes after it.
 */
export function inProcess(serve: (fixture: ConformanceFixture) => Promise<{ request: SendRequest; close(): Promise<void> }>): () => Promise<RunningApp> {
  return async () => {
    const fixture = await createConformanceFixture();
    const served = await serve(fixture);
    return {
      world: fixtureWorld(fixture),
      request: served.request,
      close: async () => {
        await served.close();
        await fixture.close();
      },
    };
  };
}

/** The world of an app at `origin` whose server entry answers `WORLD_PATH` with `worldResponse()`. */
export async function remoteWorld(origin: string): Promise<ConformanceWorld> {
  const read = async (): Promise<WorldReport> => {
    const res = await fetch(new URL(WORLD_PATH, origin));
    if (res.status !== 200) throw new Error(`${WORLD_PATH} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as WorldReport;
  };
  const { keys, foreignKey } = await read();
  return { items: conformanceItems(), keys, foreignKey, reports: async () => (await read()).reported };
}
