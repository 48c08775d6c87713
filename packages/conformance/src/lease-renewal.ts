/**
 * Lease renewal over HTTP, for every adapter: a streamed response that lasts several times
 * longer than an in-flight lease keeps its key's one slot until its body ends, because the
 * limit renews the lease every third of its time to live while the request is at work.
 * Each adapter serves two routes with its own middleware; the suite drives a stream it
 * feeds and ends itself, and asks for the same key meanwhile. Test support only.
 * @module
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiKeyGuard, createConcurrencyLimit, createKeyAdmin, createKeyring, createMemoryConcurrencyStore, createMemoryKeyStore } from '@keyset/core';
import type { ApiKeyGuard, ConcurrencyStore, Keyring } from '@keyset/core';
import { PREFIX, REALM } from './fixture.ts';
import { expectProblem } from './expect-problem.ts';
import type { SendRequest } from './world.ts';

/** What an adapter serves for the suite. */
export interface LeaseApp {
  /** A guard whose in-flight limit allows one request at a time per key. */
  readonly guard: ApiKeyGuard;
  /** The body of `GET /held`: a text stream the suite feeds and ends. Called once per admitted request. */
  held(): ReadableStream<Uint8Array>;
}

/**
 * An adapter under test: serves, with its own middleware and over a socket,
 * - `GET /whoami`: `apiKey({ guard })`, answering any 200;
 * - `GET /held`: `apiKey({ guard })`, answering `app.held()` as a streamed `text/plain` body.
 */
export interface LeaseRenewalUnderTest {
  serve(app: LeaseApp): Promise<{ request: SendRequest; close(): Promise<void> }>;
}

/** A lease store whose expiry runs on a real clock: memory with `Date.now`, or a server shared by instances (Redis). */
export interface RealTimeLeaseStore {
  /** Named in the test's title, e.g. `Redis`. */
  readonly name: string;
  /** A fresh store (its own key prefix); `close` drops what it wrote. */
  open(): Promise<{ store: ConcurrencyStore; close(): Promise<void> }>;
}

/** A store that tells when it has renewed a live lease; every call goes to `store` unchanged. */
function watchRenewals(store: ConcurrencyStore): { store: ConcurrencyStore; renewed(): Promise<void> } {
  const renew = store.renew;
  if (renew === undefined) throw new Error('the store under test cannot renew leases');
  let waiting: (() => void)[] = [];
  return {
    store: {
      acquire: (holder, leaseId, max, ttlMs) => store.acquire(holder, leaseId, max, ttlMs),
      release: (holder, leaseId) => store.release(holder, leaseId),
      renew: async (holder, leaseId, ttlMs) => {
        const live = await renew.call(store, holder, leaseId, ttlMs);
        if (live) for (const wake of waiting.splice(0)) wake();
        return live;
      },
    },
    // Resolves at the next renewal that finds its lease live.
    renewed: () => new Promise<void>((resolve) => waiting.push(resolve)),
  };
}

/** A stream the test writes to and ends; `held()` hands it to the one request admitted. */
function tap(): { held(): ReadableStream<Uint8Array>; push(text: string): void; end(): void; abandon(): void } {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  let handed = false;
  return {
    held() {
      // A second admitted request while the first streams is the bug this suite looks for.
      if (handed) throw new Error('GET /held admitted twice for a key capped at one request in flight');
      handed = true;
      return stream;
    },
    push: (text) => controller!.enqueue(encoder.encode(text)),
    end: () => controller!.close(),
    // After a failed check: the server's response ends, so the server can close.
    abandon: () => {
      try {
        controller?.error(new Error('abandoned by the test'));
      } catch {
        // Already ended.
      }
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `event`, or after `ms` without it: the check that follows then says what went wrong. */
async function atMost(event: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([event, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The memory store on `Date.now`, the real-time run every adapter gets. */
const memoryOnRealTime: RealTimeLeaseStore = {
  name: 'memory store',
  open: async () => ({ store: createMemoryConcurrencyStore(), close: async () => {} }),
};

/**
 * Registers the suite under `describe(name)`: the memory store on a clock the test moves,
 * then real time on the memory store and on each of `shared` (`undefined`: its server is
 * not there, the run is skipped).
 */
export function describeLeaseRenewal(name: string, adapter: LeaseRenewalUnderTest, shared: readonly (RealTimeLeaseStore | undefined)[] = []): void {
  describe(`lease renewal over HTTP: ${name}`, () => {
    let keyring: Keyring | undefined;
    let closing: (() => Promise<void>)[] = [];

    beforeEach(() => {
      closing = [];
    });
    afterEach(async () => {
      for (const close of closing.reverse()) await close();
      await keyring?.close();
      keyring = undefined;
    });

    /** Serves the adapter's app over `store` with a lease of `leaseTtlSeconds`: requests as the key it issued, the stream's tap, and the two checks. */
    async function start(store: ConcurrencyStore, leaseTtlSeconds: number) {
      keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX });
      const key = (await createKeyAdmin(keyring).issue({ name: 'streamer', scopes: [] })).key;
      const guard = createApiKeyGuard({ keyring, realm: REALM, concurrency: createConcurrencyLimit({ max: 1, leaseTtlSeconds, store }) });
      const feed = tap();
      const served = await adapter.serve({ guard, held: () => feed.held() });
      closing.push(() => served.close());
      closing.push(async () => feed.abandon());
      const init = { headers: { authorization: `ApiKey ${key}` } };
      const get = (path: string): Promise<Response> => served.request(path, init);
      /** The same key again: refused while the stream holds the slot. */
      const expectRefused = async (when: string): Promise<void> => {
        const res = await get('/whoami');
        const body = await expectProblem(res, 429, 'concurrency_limited').catch((error: unknown) => {
          throw new Error(`${when}: the same key was not refused (${res.status})`, { cause: error });
        });
        expect(body).toMatchObject({ max_in_flight: 1 });
      };
      /** Asks until admitted: the lease is given back once the server has finished the response, just after the client read its end. */
      const admittedAgain = async (): Promise<number> => {
        for (let attempt = 0; ; attempt += 1) {
          const res = await get('/whoami');
          await res.text();
          if (res.status !== 429 || attempt === 2000) return res.status;
          await sleep(5);
        }
      };
      return { get, feed, expectRefused, admittedAgain };
    }

    /** Opens `GET /held` and reads its first chunk: the request is admitted and streaming. */
    async function openStream(get: (path: string) => Promise<Response>, feed: ReturnType<typeof tap>) {
      // The first chunk waits in the stream: Node's servers send the headers with it.
      feed.push('chunk 0\n');
      const res = await get('/held');
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      closing.push(() => reader.cancel().catch(() => {}));
      const decoder = new TextDecoder();
      /** Reads `text` at the client. */
      const arrives = async (text: string): Promise<void> => {
        let seen = '';
        while (seen.length < text.length) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended before "${text}" arrived`);
          seen += decoder.decode(value, { stream: true });
        }
        expect(seen).toBe(text);
      };
      /** Writes `text` into the stream and reads it back at the client. */
      const relay = async (text: string): Promise<void> => {
        feed.push(text);
        await arrives(text);
      };
      /** Ends the stream and reads the end at the client. */
      const finish = async (): Promise<void> => {
        feed.end();
        for (;;) if ((await reader.read()).done) return;
      };
      await arrives('chunk 0\n');
      return { relay, finish };
    }

    it('memory store on a clock the test moves: a stream held across 3.6 lease lifetimes keeps the slot; the next request is admitted once it ends', async () => {
      // The store's clock stands still unless the test moves it, so the lease can only outlive
      // its time to live by being renewed; the renewal timer itself runs on real time (every
      // 100 ms here), and the test waits for each renewal, never for a duration.
      let now = 1_750_000_000_000;
      const ttlMs = 300;
      const watched = watchRenewals(createMemoryConcurrencyStore({ clock: () => now }));
      const { get, feed, expectRefused, admittedAgain } = await start(watched.store, ttlMs / 1000);
      const stream = await openStream(get, feed);
      await expectRefused('at admission');
      for (let step = 1; step <= 4; step += 1) {
        // A limit that never renews fails at the next check, not at the test's timeout.
        await atMost(watched.renewed(), 5_000);
        // 0.9 of a lifetime since the last renewal: without it, the lease expired a step ago.
        now += ttlMs * 0.9;
        await expectRefused(`${(step * 0.9).toFixed(1)} lease lifetimes after admission`);
        await stream.relay(`chunk ${step}\n`);
      }
      await stream.finish();
      expect(await admittedAgain()).toBe(200);
    });

    for (const realTime of [memoryOnRealTime, ...shared]) {
      describe.skipIf(realTime === undefined)(`${realTime?.name ?? 'shared store'}, real time`, () => {
        it('a stream held for over three lease lifetimes keeps the slot: refused after each lifetime, admitted once it ends', async () => {
          // Real time: the lease's expiry runs on the store's clock. A lifetime of 1.5 s is
          // renewed every 0.5 s, so only a stall of a second would let it lapse; each check
          // comes a quarter lifetime after a lifetime has passed since admission.
          const opened = await realTime!.open();
          closing.push(() => opened.close());
          const ttlMs = 1500;
          const { get, feed, expectRefused, admittedAgain } = await start(opened.store, ttlMs / 1000);
          const stream = await openStream(get, feed);
          const admittedAt = Date.now();
          await expectRefused('at admission');
          for (let lifetimes = 1; lifetimes <= 3; lifetimes += 1) {
            await sleep(Math.max(0, admittedAt + (lifetimes + 0.25) * ttlMs - Date.now()));
            await expectRefused(`${lifetimes} lease lifetimes after admission`);
            await stream.relay(`chunk ${lifetimes}\n`);
          }
          await stream.finish();
          expect(await admittedAgain()).toBe(200);
        });
      });
    }
  });
}
