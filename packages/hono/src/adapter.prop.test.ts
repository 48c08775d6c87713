import { describeAdapterFuzz, inProcess } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';

describeAdapterFuzz('hono (app.request)', {
  start: inProcess(async (fixture) => {
    const app = conformanceApp(fixture);
    return { request: async (path, init) => app.request(path, init), close: async () => {} };
  }),
});
