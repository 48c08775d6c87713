import { describeAdapterConformance, describeOneErrorPath, describeRequestRules, inProcessWithRaw, overHttp, rawOverSocket } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';
import { listen } from './testing/listen.ts';

const start = inProcessWithRaw(async (fixture) => {
  const { origin, close } = await listen(conformanceApp(fixture));
  return { request: overHttp(origin), raw: rawOverSocket(origin), close };
});

// Express 5 parses the query with `qs`; paginate() must leave that parse alone.
describeAdapterConformance('express (node:http over a socket)', { parsedQuery: { limit: '2', a: { b: 'c' }, x: ['1', '2'] }, start });
describeRequestRules('express (node:http over a socket)', { start, transport: 'socket' });
describeOneErrorPath('express (node:http over a socket)', { start });

