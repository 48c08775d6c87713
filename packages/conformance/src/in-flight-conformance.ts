/**
 * The in-flight limit checks of the adapter conformance suite: the `inflight` key may have
 * one request at a time, and every way a request ends (any method and status, a handler
 * that throws or rejects, a streamed body read or cancelled, a client that goes away)
 * gives its lease back. Test support only.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { INFLIGHT_STATUSES } from './fixture.ts';
import { auth } from './conformance-run.ts';
import type { ConformanceRun } from './conformance-run.ts';
import { expectProblem } from './expect-problem.ts';

/** Registers the in-flight limit checks. */
export function describeInFlightConformance(run: ConformanceRun): void {
  const { adapter, get } = run;
  describe('in-flight limits (the inflight key: one request at a time)', () => {
    const inflight = (): RequestInit => auth(run.fixture.keys.inflight);
    /**
     * Asks `GET /whoami` as the inflight key until it answers `status`, each answer read to
     * its end (a response whose body nobody reads is still in flight); gives up after 2,000.
     */
    const until = async (status: 200 | 429): Promise<{ status: number; body: string }> => {
      for (let attempt = 0; ; attempt += 1) {
        const res = await get('/whoami', inflight());
        const body = await res.text();
        if (res.status === status || attempt === 2000) return { status: res.status, body };
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };

    /**
     * Sends `path` as the inflight key until it is admitted (not 429 `concurrency_limited`:
     * a lease still held), each answer read to its end; gives up after 2,000 tries.
     */
    const admitted = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: string }> => {
      for (let attempt = 0; ; attempt += 1) {
        const res = await get(path, { ...init, ...inflight(), redirect: 'manual' });
        const body = await res.text();
        if (!(res.status === 429 && body.includes('concurrency_limited')) || attempt === 2000) return { status: res.status, body };
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };

    it('HEAD on a GET route gives its lease back: five in a row, then a GET, each admitted', async () => {
      for (let i = 0; i < 5; i += 1) expect((await admitted('/whoami', { method: 'HEAD' })).status).toBe(200);
      expect((await admitted('/whoami')).status).toBe(200);
    });

    it('every method and status on a capped route gives its lease back when the response ends, whatever its body', async () => {
      for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE']) {
        for (const status of INFLIGHT_STATUSES) {
          const res = await admitted(`/inflight/status?status=${status}`, { method });
          expect(res.status, `${method} answered ${status}`).toBe(status);
          if (method !== 'HEAD' && status !== 204 && status !== 304) expect(res.body).toBe(`status ${status}`);
        }
      }
      expect((await until(200)).status).toBe(200);
    });

    it.each([['/inflight/rejects'], ['/inflight/throws-value'], ['/inflight/rethrown'], ['/inflight/non-error']])(
      '%s: a handler that rejects, or an error handler that rethrows or throws a non-Error, gives its lease back',
      async (path) => {
        for (let i = 0; i < 2; i += 1) {
          // Whatever the framework makes of a failed error handler (a 500, Fastify's reply of the
          // thrown string, a dropped connection), the next request is admitted.
          const res = await get(path, inflight()).catch(() => undefined);
          if (res !== undefined) {
            expect(res.status).not.toBe(429);
            await res.text().catch(() => '');
          }
          expect((await until(200)).status).toBe(200);
        }
      },
    );

    it('a handler that throws gives its lease back: every request of the key is admitted again', async () => {
      for (let i = 0; i < 3; i += 1) {
        const res = await get('/inflight/throws', inflight());
        const text = await res.text();
        expect(res.status, text).toBe(500);
        expect((await until(200)).status).toBe(200);
      }
    });

    const clientGone = adapter.seesClientGone === false ? it.skip : it;

    clientGone('a streamed response holds its lease until its body ends: 429 concurrency_limited with Retry-After meanwhile', async () => {
      const streaming = await get('/inflight/stream', inflight());
      expect(streaming.status).toBe(200);
      const stream = (streaming.body as ReadableStream<Uint8Array>).getReader();
      expect(new TextDecoder().decode((await stream.read()).value)).toBe('chunk 1\n');
      const refused = await get('/whoami', inflight());
      const body = await expectProblem(refused, 429, 'concurrency_limited');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(body).toMatchObject({ max_in_flight: 1 });
      expect(JSON.stringify(body)).not.toContain(run.fixture.keys.inflight.slice(-12));
      // Another key is not limited.
      expect(await (await get('/whoami', auth(run.fixture.keys.reader))).json()).toMatchObject({ name: 'reader' });
      // The client goes away mid-stream: the stream is cancelled and the lease given back.
      await stream.cancel();
      expect((await until(200)).status).toBe(200);
    });

    it('a streamed response read to its end gives its lease back', async () => {
      const res = await get('/inflight/stream?chunks=3', inflight());
      expect(await res.text()).toBe('chunk 1\nchunk 2\nchunk 3\n');
      expect((await until(200)).status).toBe(200);
    });

    clientGone('a client that goes away while the handler works gives its lease back', async () => {
      const controller = new AbortController();
      const slow = get('/inflight/slow', { ...inflight(), signal: controller.signal }).catch((error: unknown) => error);
      // Admitted once the key is refused: the slow request holds the one lease.
      expect(JSON.parse((await until(429)).body)).toMatchObject({ code: 'concurrency_limited' });
      controller.abort();
      // In process (no socket) the handler's late answer still comes back: a client that
      // went away never reads it, as a server cancels the body of a closed connection.
      const late = await slow;
      if (late instanceof Response) await late.body?.cancel();
      expect((await until(200)).status).toBe(200);
    });
  });
}
