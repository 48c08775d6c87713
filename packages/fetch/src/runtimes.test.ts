import { describe, it } from 'vitest';
import { describeAdapterConformance, describeAdapterFuzz } from '@keyset/conformance';
import { PARSED_QUERY } from './testing/conformance-app.ts';
import { findRuntime, startUnder } from './testing/runtimes.ts';
import type { RuntimeName } from './testing/runtimes.ts';

// The same conformance app, bundled with Web Crypto, served by each runtime's own server
// (Bun.serve, Deno.serve, workerd serve) in a child process, driven over HTTP.
const servers: Record<RuntimeName, string> = { bun: 'Bun.serve', deno: 'Deno.serve', workerd: 'workerd serve' };

for (const name of ['bun', 'deno', 'workerd'] as const) {
  const binary = findRuntime(name);
  if (binary === undefined) {
    describe.skip(`fetch on ${name}`, () => it(`needs ${name} (see the warning above)`, () => {}));
    continue;
  }
  // A local workerd has no way to tell a worker the socket peer.
  const adapter = { parsedQuery: PARSED_QUERY, peer: name === 'workerd' ? ('unknown' as const) : ('loopback' as const), seesClientGone: name !== 'workerd', start: () => startUnder(name, binary) };
  describeAdapterConformance(`fetch (${servers[name]})`, adapter);
  describeAdapterFuzz(`fetch (${servers[name]})`, adapter);
}
