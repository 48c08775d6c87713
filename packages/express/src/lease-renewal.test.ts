import { Readable, pipeline } from 'node:stream';
import express from 'express';
import { describeLeaseRenewal, describeShadowLimits, overHttp } from '@keyset/conformance';
import type { LeaseApp } from '@keyset/conformance';
import { redisLeaseStore } from '@keyset/test-support';
import { apiKey, problemHandler } from './index.ts';
import { listen } from './testing/listen.ts';

/** `GET /whoami` and `GET /held` behind `apiKey()` and `problemHandler()`, on node:http over a socket. */
async function serveLeaseApp({ guard, held }: LeaseApp) {
  const app = express();
  app.get('/whoami', apiKey({ guard }), (_req, res) => {
    res.json({ name: res.locals.apiKey.name });
  });
  app.get('/held', apiKey({ guard }), (_req, res) => {
    res.type('text/plain');
    pipeline(Readable.fromWeb(held() as never), res, () => {});
  });
  app.use(problemHandler());
  const { origin, close } = await listen(app);
  return { request: overHttp(origin), close };
}

describeLeaseRenewal('express (node:http over a socket)', { serve: serveLeaseApp }, [await redisLeaseStore()]);
describeShadowLimits('express (node:http over a socket)', { serve: serveLeaseApp });
