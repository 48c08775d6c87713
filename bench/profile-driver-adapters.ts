/**
 * Drives one stack of bench/http/stacks.ts (e.g. `express-keyset`, `fastify`) in process
 * for a fixed number of requests, for an on-CPU profile of an adapter:
 *
 *   perf record -F 999 -g -o adapters.perf -- node --perf-basic-prof --import tsx bench/profile-driver-adapters.ts fastify-keyset
 *   node bench/perf-breakdown.mjs adapters.perf <µs/request printed by this run>
 *
 * Requests are injected as in bench/inprocess-adapters.bench.ts (node:http's
 * IncomingMessage and ServerResponse over a stub socket), rotating through BENCH_KEYS keys
 * and the stack's own cursors. Prints CPU µs per request. Env: PROFILE_REQUESTS (200000).
 */
import { inject, type Listener } from './http/inject.ts';
import { build } from './http/stacks.ts';

const which = process.argv[2] ?? 'express-keyset';
const N = Number(process.env.PROFILE_REQUESTS ?? 200_000);
const { listener, keys } = (await build(which)) as { listener: Listener; keys: string[] };

const paths: string[] = [];
for (const filter of ['', 'status=paid&', 'status=refunded&']) {
  let path = `/api/orders?${filter}limit=20`;
  for (let page = 0; page < 250; page++) {
    paths.push(path);
    const sent = await inject(listener, path, keys[0]!, true);
    if (sent.status !== 200) throw new Error(`${path} → ${sent.status} ${sent.body}`);
    const next = (JSON.parse(sent.body) as { nextCursor: string | null }).nextCursor;
    if (next === null) break;
    path = `/api/orders?${filter}limit=20&cursor=${encodeURIComponent(next)}`;
  }
}
for (let i = 0; i < keys.length; i++) await inject(listener, paths[i % paths.length]!, keys[i]!);
const start = process.cpuUsage();
for (let i = 0; i < N; i++) {
  const sent = await inject(listener, paths[i % paths.length]!, keys[(i * 7919) % keys.length]!);
  if (sent.status !== 200) throw new Error(`${which}: ${sent.status}`);
}
const used = process.cpuUsage(start);
console.log(`${which}: ${((used.user + used.system) / N).toFixed(2)} CPU µs/request over ${N} requests`);
