import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describeLeaseRenewal, describeShadowLimits, overHttp } from '@keyset/conformance';
import type { LeaseApp } from '@keyset/conformance';
import { redisLeaseStore } from '@keyset/test-support';
import { apiKey, problemHandler } from './index.ts';

/** `GET /whoami` and `GET /held` behind `apiKey()` inside `problemHandler()`, on Node (@hono/node-server) over a socket. */
async function serveLeaseApp({ guard, held }: LeaseApp) {
  const whoami = apiKey({ guard })((_request, key) => Response.json({ name: key.name }));
  const stream = apiKey({ guard })(() => new Response(held(), { headers: { 'content-type': 'text/plain' } }));
  const app = problemHandler()((request: Request): Promise<Response> => (new URL(request.url).pathname === '/held' ? stream(request) : whoami(request)));
  const { server, origin } = await new Promise<{ server: ReturnType<typeof serve>; origin: string }>((resolve) => {
    const server = serve({ fetch: app, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve({ server, origin: `http://127.0.0.1:${info.port}` }));
  });
  return { request: overHttp(origin), close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))) };
}

describeLeaseRenewal('fetch (Node, @hono/node-server over a socket)', { serve: serveLeaseApp }, [await redisLeaseStore()]);
describeShadowLimits('fetch (Node, @hono/node-server over a socket)', { serve: serveLeaseApp });
