import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describeAdapterConformance, inProcess, overHttp } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';

// Hono's parsed query keeps every parameter as given: `c.req.queries()`.
const parsedQuery = { limit: ['2'], 'a[b]': ['c'], x: ['1', '2'] };

describeAdapterConformance('hono (app.request)', {
  parsedQuery,
  // No socket: the client address is unknown.
  peer: 'unknown',
  start: inProcess(async (fixture) => {
    const app = conformanceApp(fixture);
    return { request: async (path, init) => app.request(path, init), close: async () => {} };
  }),
});

describeAdapterConformance('hono (@hono/node-server over a socket)', {
  parsedQuery,
  start: inProcess(async (fixture) => {
    const app = conformanceApp(fixture);
    const { server, origin } = await new Promise<{ server: ReturnType<typeof serve>; origin: string }>((resolve) => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
        resolve({ server, origin: `http://127.0.0.1:${info.port}` }),
      );
    });
    return {
      request: overHttp(origin),
      close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
    };
  }),
});
