import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { describeLeaseRenewal, describeShadowLimits, overHttp } from '@keyset/conformance';
import type { LeaseApp } from '@keyset/conformance';
import { redisLeaseStore } from '@keyset/test-support';
import { apiKey, keyset } from './index.ts';

/** `GET /whoami` and `GET /held` behind `apiKey()`, over a socket. */
async function serveLeaseApp({ guard, held }: LeaseApp) {
  const app = Fastify();
  await app.register(keyset);
  app.get('/whoami', { onRequest: apiKey({ guard }) }, async (request) => ({ name: request.apiKey.name }));
  app.get('/held', { onRequest: apiKey({ guard }) }, async (_request, reply) => reply.type('text/plain').send(Readable.fromWeb(held() as never)));
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { request: overHttp(address), close: () => app.close() };
}

describeLeaseRenewal('fastify (over a socket)', { serve: serveLeaseApp }, [await redisLeaseStore()]);
describeShadowLimits('fastify (over a socket)', { serve: serveLeaseApp });
