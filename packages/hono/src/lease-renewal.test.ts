import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { describeLeaseRenewal, describeShadowLimits, overHttp } from '@keyset/conformance';
import type { LeaseApp } from '@keyset/conformance';
import { redisLeaseStore } from '@keyset/test-support';
import { apiKey, problemHandler } from './index.ts';

/** `GET /whoami` and `GET /held` behind `apiKey()` with `app.onError(problemHandler())`, on @hono/node-server over a socket. */
async function serveLeaseApp({ guard, held }: LeaseApp) {
  const app = new Hono();
  app.onError(problemHandler());
  app.get('/whoami', apiKey({ guard }), (c) => c.json({ name: c.var.apiKey.name }));
  app.get('/held', apiKey({ guard }), (c) => c.body(held(), 200, { 'content-type': 'text/plain' }));
  const { server, origin } = await new Promise<{ server: ReturnType<typeof serve>; origin: string }>((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve({ server, origin: `http://127.0.0.1:${info.port}` }));
  });
  return { request: overHttp(origin), close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))) };
}

describeLeaseRenewal('hono (@hono/node-server over a socket)', { serve: serveLeaseApp }, [await redisLeaseStore()]);
describeShadowLimits('hono (@hono/node-server over a socket)', { serve: serveLeaseApp });
