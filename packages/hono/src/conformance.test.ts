import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describeAdapterConformance, describeOneErrorPath, describeRequestRules, inProcessWithRaw, overHttp, rawInProcess, rawOverSocket } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';

// Hono's parsed query keeps every parameter as given: `c.req.queries()`.
const parsedQuery = { limit: ['2'], 'a[b]': ['c'], x: ['1', '2'] };

const inMemory = inProcessWithRaw(async (fixture) => {
  const app = conformanceApp(fixture);
  const request = async (path: string, init?: RequestInit): Promise<Response> => app.request(path, init);
  return { request, raw: rawInProcess(request), close: async () => {} };
});

const onNode = inProcessWithRaw(async (fixture) => {
  const app = conformanceApp(fixture);
  const { server, origin } = await new Promise<{ server: ReturnType<typeof serve>; origin: string }>((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ server, origin: `http://127.0.0.1:${info.port}` }),
    );
  });
  return {
    request: overHttp(origin),
    raw: rawOverSocket(origin),
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
});

// No socket: the client address is unknown.
describeAdapterConformance('hono (app.request)', { parsedQuery, peer: 'unknown', start: inMemory });
describeAdapterConformance('hono (@hono/node-server over a socket)', { parsedQuery, start: onNode });
describeRequestRules('hono (app.request)', { start: inMemory, transport: 'request' });
describeRequestRules('hono (@hono/node-server over a socket)', { start: onNode, transport: 'socket', serverRefusesFirst: true });
describeOneErrorPath('hono (app.request)', { start: inMemory });
describeOneErrorPath('hono (@hono/node-server over a socket)', { start: onNode });

