import { describeAdapterConformance, inProcess, overHttp } from '@keyset/conformance';
import type { AdapterUnderTest } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';
import { listen } from './testing/listen.ts';

const overSockets: AdapterUnderTest = {
  // Express 5 parses the query with `qs`; paginate() must leave that parse alone.
  parsedQuery: { limit: '2', a: { b: 'c' }, x: ['1', '2'] },
  start: inProcess(async (fixture) => {
    const { origin, close } = await listen(conformanceApp(fixture));
    return { request: overHttp(origin), close };
  }),
};

describeAdapterConformance('express (node:http over a socket)', overSockets);
