/**
 * In-process cost per request, no sockets: each request is injected into the same
 * `@hono/node-server` listener the HTTP benchmark runs (a fake IncomingMessage in, a
 * fake ServerResponse out that serialises the head as Node would), so the adapter's
 * Request/Response handling is measured as served, without the kernel and the load
 * generator. Stacks — bare Hono; keyset auth only (`apiKey()` + per-key GCRA);
 * keyset pagination only (`paginate()` + `sendPage()`); keyset full stack; the peer
 * stack (hono/bearer-auth + hono-rate-limiter + unsigned cursor); the full stack's
 * unavoidable work written plainly by hand with none of keyset's checks
 * (bench/http/handrolled-stack.ts) — share one process
 * and run interleaved: every round runs a batch of each, in an order that reverses every
 * other round, and each stack's figure is the median over rounds of (its CPU µs/request −
 * bare Hono's CPU µs/request in that round). CPU time (`process.cpuUsage()`), not wall
 * time, so that other processes on a shared machine do not count. Traffic rotates through BENCH_KEYS (10,000)
 * keys and more than 500 distinct valid cursors, as in the HTTP benchmark.
 *
 * The same run times three parts of a request on their own, through the public API as
 * an application calls it (each awaited): cursor codec decode + encode, warm key
 * verification, and the guard (authenticate + GCRA). Each figure is also given in units
 * of bare Hono's own cost in the same round (median over rounds of figure ÷ bare), a
 * yardstick that moves less between machines than µs do.
 *
 * Env: BENCH_ROUNDS (15), BENCH_BATCH (2000 requests per stack per round), BENCH_KEYS.
 * Smoke mode (BENCH_SMOKE=1): one round of 20 requests per stack, 50 keys.
 *
 * Run: npx -y pnpm@10.34.9 bench inprocess
 */
import { createCursorCodec, defineSortSpec, type CursorPosition } from '@keyset/core';
import { cursorFingerprint } from '@keyset/core/adapter';
import type { Hono } from 'hono';
import { keysetCore, keysetHono } from './http/keyset-stacks.ts';
import { orders } from './http/orders.ts';
import { handRolledHono } from './http/handrolled-stack.ts';
import { honoPeer } from './http/peer-stacks.ts';
import { Hono as HonoApp } from 'hono';
import { KEY_COUNT, plainPage, statusOf } from './http/orders.ts';
import { peerKeys } from './http/peer-stacks.ts';
import { save, setting } from './support.ts';
import { cpuNow, stackTimer, warmStack, type Stack } from './http/fake-node.ts';

const ROUNDS = setting('BENCH_ROUNDS', 15, 1);
const BATCH = setting('BENCH_BATCH', 2000, 20);
const PAGES = setting('BENCH_PAGES', 250, 3);
/** keyset's unavoidable work written plainly by hand, none of its checks (bench/http/handrolled-stack.ts). */
const HAND_ROLLED = 'hand-rolled: same hashes, lookups, headers, body; no checks';

function bareHono(): { app: Hono; keys: string[] } {
  const app = new HonoApp();
  app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
  return { app, keys: peerKeys(KEY_COUNT).keys };
}

const stacks: Stack[] = [];
{
  const bare = bareHono();
  stacks.push(await warmStack('hono (bare)', bare.app, bare.keys, PAGES));
  const peer = honoPeer();
  stacks.push(await warmStack('peer: bearer-auth + hono-rate-limiter + plain cursor', peer.app, peer.keys, PAGES));
  const handRolled = handRolledHono();
  stacks.push(await warmStack(HAND_ROLLED, handRolled.app as unknown as Hono, handRolled.keys, PAGES));
  for (const [name, parts] of [
    ['keyset auth only', { auth: true, paginate: false }],
    ['keyset pagination only', { auth: false, paginate: true }],
    ['keyset full stack', { auth: true, paginate: true }],
  ] as const) {
    const { app, keys } = await keysetHono(parts);
    stacks.push(await warmStack(name, app, keys, PAGES));
  }
}

// Micro targets: each a function of the request number, run in the same interleaved rounds.
const core = await keysetCore();
const sort = defineSortSpec([
  { key: 'createdAt', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'int', unique: true },
]);
const codec = createCursorCodec({ secrets: ['benchmark-cursor-secret-0123456789abcdef'] });
const fingerprint = await cursorFingerprint({ endpoint: 'GET /api/orders', sort });
const positions: CursorPosition[] = orders.filter((_, i) => i % 17 === 0).slice(0, 500).map((o) => [o.createdAt, o.id]);
const cursors = await Promise.all(positions.map((p) => codec.encode(p, fingerprint, sort)));
for (const key of core.keys) await core.keyring.verify(key);
const scopes = { scopes: ['orders:read'] };
const micro: { name: string; run: (i: number) => Promise<unknown> }[] = [
  {
    name: 'cursor codec decode + encode',
    run: async (i) => {
      const at = i % cursors.length;
      await codec.decode(cursors[at]!, fingerprint, sort);
      return codec.encode(positions[at]!, fingerprint, sort);
    },
  },
  { name: 'warm key verify', run: (i) => core.keyring.verify(core.keys[(i * 7919) % core.keys.length]!) },
  {
    name: 'guard.check (authenticate + GCRA)',
    run: (i) =>
      core.guard.check({ authorization: `ApiKey ${core.keys[(i * 7919) % core.keys.length]!}`, url: 'http://localhost/api/orders?limit=20' }, scopes),
  },
];

let counter = 0;
const timeStack = stackTimer(BATCH);

async function timeMicro(m: (typeof micro)[number]): Promise<number> {
  const start = cpuNow();
  for (let n = 0; n < BATCH * 4; n++) {
    await m.run(counter++);
  }
  return (cpuNow() - start) / (BATCH * 4);
}

const perRound: Record<string, number[]> = {};
const overBare: Record<string, number[]> = {};
/** Each figure in units of bare Hono's own cost in the same round: a yardstick that moves less with the machine than µs do. */
const inBareUnits: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? stacks : [...stacks].reverse();
  const times: Record<string, number> = {};
  for (const s of order) times[s.name] = await timeStack(s);
  for (const m of round % 2 === 0 ? micro : [...micro].reverse()) (perRound[m.name] ??= []).push(await timeMicro(m));
  const bare = times[stacks[0]!.name]!;
  for (const s of stacks) {
    (perRound[s.name] ??= []).push(times[s.name]!);
    (overBare[s.name] ??= []).push(times[s.name]! - bare);
    (inBareUnits[s.name] ??= []).push((times[s.name]! - bare) / bare);
  }
  for (const m of micro) (inBareUnits[m.name] ??= []).push(perRound[m.name]!.at(-1)! / bare);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[Math.floor(s.length / 4)]!.toFixed(1)}–${s[Math.floor((3 * s.length) / 4)]!.toFixed(1)}`;
};

const rows = stacks.map((s) => ({
  stack: s.name,
  'µs/req': Number(median(perRound[s.name]!).toFixed(2)),
  'µs over bare': Number(median(overBare[s.name]!).toFixed(2)),
  'over bare, interquartile': spread(overBare[s.name]!),
  'over bare ÷ bare': Number(median(inBareUnits[s.name]!).toFixed(3)),
}));
const microRows = micro.map((m) => ({
  case: m.name,
  'µs/op': Number(median(perRound[m.name]!).toFixed(2)),
  interquartile: spread(perRound[m.name]!),
  '÷ bare': Number(median(inBareUnits[m.name]!).toFixed(3)),
}));
console.table(rows);
console.table(microRows);
save('inprocess', { rounds: ROUNDS, batch: BATCH, keys: KEY_COUNT, cursors: stacks.map((s) => s.paths.length), rows, micro: microRows });
