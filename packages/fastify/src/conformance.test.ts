import { describeAdapterConformance, describeAdapterFuzz, describeOneErrorPath, describeRequestRules, inProcessWithRaw, overHttp, rawOverSocket } from '@keyset/conformance';
import type { AdapterUnderTest } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';

const start = inProcessWithRaw(async (fixture) => {
  const app = await conformanceApp(fixture);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { request: overHttp(address), raw: rawOverSocket(address), close: () => app.close() };
});

const overSockets: AdapterUnderTest = {
  // Fastify parses the query itself (repeats become arrays, brackets stay in the name);
  // paginate() must leave that parse alone.
  parsedQuery: { limit: '2', 'a[b]': 'c', x: ['1', '2'] },
  start,
};

describeAdapterConformance('fastify (over a socket)', overSockets);
describeAdapterFuzz('fastify (over a socket)', overSockets);
describeRequestRules('fastify (over a socket)', { start, transport: 'socket' });
describeOneErrorPath('fastify (over a socket)', { start });

