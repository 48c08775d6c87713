import { describeAdapterFuzz, inProcess, overHttp } from '@keyset/conformance';
import { conformanceApp } from './testing/conformance-app.ts';
import { listen } from './testing/listen.ts';

describeAdapterFuzz('express (node:http over a kept-alive socket)', {
  start: inProcess(async (fixture) => {
    const { origin, close } = await listen(conformanceApp(fixture));
    return { request: overHttp(origin), close };
  }),
});
