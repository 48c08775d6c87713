import { describeAdapterConformance, describeProblemsWithoutHandler, describeRequestRules, inProcess, inProcessWithRaw, overHttp, rawOverSocket } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';
import { listen } from './testing/listen.ts';

const start = inProcessWithRaw(async (fixture) => {
  const { origin, close } = await listen(conformanceApp(fixture));
  return { request: overHttp(origin), raw: rawOverSocket(origin), close };
});

// Express 5 parses the query with `qs`; paginate() must leave that parse alone.
describeAdapterConformance('express (node:http over a socket)', { parsedQuery: { limit: '2', a: { b: 'c' }, x: ['1', '2'] }, start });
describeRequestRules('express (node:http over a socket)', { start, transport: 'socket' });

// No problemHandler(): checkRequest()'s default `refusals: 'answer'` sends keyset's problems.
const withoutHandler = inProcess(async (fixture) => {
  const { origin, close } = await listen(conformanceApp(fixture, { problems: false }));
  return { request: overHttp(origin), close };
});
describeProblemsWithoutHandler('express (node:http over a socket)', { start: withoutHandler });
