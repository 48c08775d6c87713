import { describeAdapterConformance } from '../../hono/src/testing/adapter-conformance.ts';
import { conformanceApp } from './testing/conformance-app.ts';
import { listen } from './testing/listen.ts';

describeAdapterConformance('express (node:http over a socket)', {
  // Express 5 parses the query with `qs`; paginate() must leave that parse alone.
  parsedQuery: { limit: '2', a: { b: 'c' }, x: ['1', '2'] },
  async start(fixture) {
    const { origin, close } = await listen(conformanceApp(fixture));
    return { request: (path, init) => fetch(new URL(path, origin), init), close };
  },
});
