import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describeAdapterConformance, describeAdapterFuzz, describeOneErrorPath, describeRequestRules, inProcessWithRaw, overHttp, rawInProcess, rawOverSocket } from '@keyset/conformance';
import { conformanceApp, PARSED_QUERY } from './testing/conformance-app.ts';

const inMemory = {
  parsedQuery: PARSED_QUERY,
  peer: 'unknown' as const,
  start: inProcessWithRaw(async (fixture) => {
    const app = conformanceApp(fixture);
    const request = (path: string, init?: RequestInit): Promise<Response> => app(new Request(new URL(path, 'http://localhost'), init));
    return { request, raw: rawInProcess(request), close: async () => {} };
  }),
};

const onNode = {
  parsedQuery: PARSED_QUERY,
  start: inProcessWithRaw(async (fixture) => {
    // @hono/node-server passes `{ incoming }` after the request: the socket peer is there.
    const app = conformanceApp(fixture, (_request, platform) => (platform as { incoming: IncomingMessage }).incoming.socket.remoteAddress);
    const { server, origin } = await new Promise<{ server: ReturnType<typeof serve>; origin: string }>((resolve) => {
      const server = serve({ fetch: app, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
        resolve({ server, origin: `http://127.0.0.1:${info.port}` }),
      );
    });
    // Idle kept-alive sockets stay open for the test: with Node's 5 s, the fuzz's seconds of
    // synchronous generation let the server close a socket as the client reuses it
    // (ECONNRESET; see packages/express/src/testing/listen.ts).
    (server as Server).keepAliveTimeout = 60_000;
    return {
      request: overHttp(origin),
      raw: rawOverSocket(origin),
      close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
    };
  }),
};

describeAdapterConformance('fetch (handler called with a Request)', inMemory);
describeAdapterConformance('fetch (Node, @hono/node-server over a socket)', onNode);
describeAdapterFuzz('fetch (Node, @hono/node-server over a socket)', onNode);
describeRequestRules('fetch (handler called with a Request)', { start: inMemory.start, transport: 'request' });
describeRequestRules('fetch (Node, @hono/node-server over a socket)', { start: onNode.start, transport: 'socket', serverRefusesFirst: true });
describeOneErrorPath('fetch (handler called with a Request)', { start: inMemory.start });
describeOneErrorPath('fetch (Node, @hono/node-server over a socket)', { start: onNode.start });

