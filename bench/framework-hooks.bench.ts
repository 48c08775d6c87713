/**
 * What a framework's documented extension points cost per request, with no keyset code in
 * them: the price any middleware pays on Fastify and on Hono, which keyset's adapters pay
 * once per hook or middleware they add. Each variant is the bare route of
 * `bench inprocess-adapters` (the same small JSON answer) plus one thing:
 *
 * - Fastify: an `onRequest` hook in callback style (`done()`), one returning a promise,
 *   three callback hooks (what keyset's plugin and route hooks add: the plugin's
 *   `onRequest` request check, `apiKey` in `onRequest`, `paginate` in `preHandler`),
 *   `request.raw.headersDistinct` read in a hook (the one way node:http tells a repeated
 *   `Authorization` header from one) or `request.raw.rawHeaders` scanned for it instead,
 *   and `request.protocol` + `request.host` + `new URL()` (the request's public URL, which
 *   a page's links need) or the same URL built as a string with its query parsed alone;
 * - Hono: one and two `app.use` middlewares (`await next()`); and a page's four headers
 *   (a 300-character `Link`, `RateLimit`, `RateLimit-Policy`, the content type) through
 *   `c.body()`, which copies them into a `Headers` object, against the same record as the
 *   headers of a `new Response()` after `c.newResponse(null)` showed Hono holds none of
 *   its own (what keyset's `sendPage()` does).
 *
 * Requests are injected as in `bench inprocess-adapters` (bench/http/inject.ts), one
 * process per framework, variants interleaved in rounds (order reversed every other
 * round); the figure is the median over rounds of (variant − bare) CPU µs per request.
 *
 * Env: BENCH_ROUNDS (21), BENCH_BATCH (4000). Smoke mode (BENCH_SMOKE=1): one round of 20.
 *
 * Run: npx -y pnpm@10.34.9 bench framework-hooks
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono, type Context } from 'hono';
import { inject, type Listener } from './http/inject.ts';
import { save, setting } from './support.ts';

const ROUNDS = setting('BENCH_ROUNDS', 21, 1);
const BATCH = setting('BENCH_BATCH', 4000, 20);
const FRAMEWORK = process.env.KEYSET_HOOKS_FRAMEWORK;
const BODY = JSON.stringify({ items: Array.from({ length: 20 }, (_, id) => ({ id, status: 'paid' })), nextCursor: null });
const KEY = 'bench_live_unused';

async function fastifyListener(setup: (app: FastifyInstance) => void): Promise<Listener> {
  let listener: Listener | undefined;
  const app = Fastify({
    serverFactory: (handler) => {
      listener = handler as Listener;
      return createServer(handler);
    },
  });
  setup(app);
  app.get('/api/orders', (_request, reply) => {
    reply.type('application/json; charset=utf-8').send(BODY);
  });
  await app.ready();
  return listener!;
}

const noop = (_request: unknown, _reply: unknown, done: () => void): void => done();

async function fastifyVariants(): Promise<Record<string, Listener>> {
  return {
    bare: await fastifyListener(() => {}),
    'one onRequest hook, callback (done())': await fastifyListener((app) => app.addHook('onRequest', noop)),
    'one onRequest hook, returning a promise': await fastifyListener((app) => app.addHook('onRequest', async () => {})),
    "three callback hooks (keyset's plugin check, apiKey, paginate)": await fastifyListener((app) => {
      app.addHook('onRequest', noop);
      app.addHook('onRequest', noop);
      app.addHook('preHandler', noop);
    }),
    'request.raw.headersDistinct read in a hook': await fastifyListener((app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        if (request.raw.headersDistinct.authorization === undefined) throw new Error('no authorization');
        done();
      }),
    ),
    'request.raw.rawHeaders scanned for authorization in a hook': await fastifyListener((app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        const raw = request.raw.rawHeaders;
        let found = 0;
        for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') found++;
        if (found === 0) throw new Error('no authorization');
        done();
      }),
    ),
    'request.protocol + request.host + new URL() in a hook': await fastifyListener((app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        if (new URL(`${request.protocol}://${request.host}${request.raw.url}`).pathname === '') throw new Error('no path');
        done();
      }),
    ),
    'request.protocol + request.host + string concatenation in a hook': await fastifyListener((app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        const target = request.raw.url ?? '/';
        const at = target.indexOf('?');
        const href = `${request.protocol}://${request.host}${at === -1 ? target : target.slice(0, at)}`;
        if (href.length === 0 || new URLSearchParams(at === -1 ? '' : target.slice(at + 1)).size < 0) throw new Error('no URL');
        done();
      }),
    ),
  };
}

/** A page's `Link` as keyset sends it: next, prev and first, two signed cursors. */
const LINK = ['next', 'prev'].map((rel) => `<http://localhost/api/orders?status=paid&limit=20&cursor=${'A'.repeat(110)}>; rel="${rel}"`).join(', ') + ', <http://localhost/api/orders?status=paid&limit=20>; rel="first"';
const PAGE_HEADERS = Object.freeze({
  ratelimit: '"default";r=999999;t=1',
  'ratelimit-policy': '"default";q=1000000;w=10',
  link: LINK,
  'content-type': 'application/json',
});

function honoVariants(): Record<string, Listener> {
  const make = (middlewares: number, route: (c: Context) => Response = (c) => c.body(BODY, 200, { 'content-type': 'application/json; charset=utf-8' })): Listener => {
    const app = new Hono();
    for (let i = 0; i < middlewares; i++) {
      app.use('/api/*', async (_c, next) => {
        await next();
      });
    }
    app.get('/api/orders', route);
    return getRequestListener(app.fetch) as unknown as Listener;
  };
  return {
    bare: make(0),
    'one middleware (await next())': make(1),
    'two middlewares': make(2),
    "a page's four headers through c.body()": make(0, (c) => c.body(BODY, 200, { ...PAGE_HEADERS })),
    'the same four as a plain record in new Response(), after a c.newResponse(null) check': make(0, (c) =>
      c.newResponse(null).headers.keys().next().done !== true ? c.body(BODY, 200, { ...PAGE_HEADERS }) : new Response(BODY, { status: 200, headers: { ...PAGE_HEADERS } }),
    ),
  };
}

const cpuNow = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function timeBatch(listener: Listener): Promise<number> {
  const start = cpuNow();
  for (let n = 0; n < BATCH; n++) {
    const sent = await inject(listener, '/api/orders?limit=20', KEY);
    if (sent.status !== 200) throw new Error(`status ${sent.status}`);
  }
  return (cpuNow() - start) / BATCH;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** One framework's variants in this process; prints its rows as JSON on the last line. */
async function child(framework: string): Promise<void> {
  const variants = framework === 'fastify' ? await fastifyVariants() : honoVariants();
  const names = Object.keys(variants);
  for (const name of names) await timeBatch(variants[name]!); // warm-up
  const over: Record<string, number[]> = {};
  const own: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const times: Record<string, number> = {};
    for (const name of round % 2 === 0 ? names : [...names].reverse()) times[name] = await timeBatch(variants[name]!);
    for (const name of names) {
      (own[name] ??= []).push(times[name]!);
      (over[name] ??= []).push(times[name]! - times.bare!);
    }
  }
  const rows = names.map((name) => ({
    framework,
    variant: name,
    'µs/req': Number(median(own[name]!).toFixed(2)),
    'µs over bare': Number(median(over[name]!).toFixed(2)),
  }));
  process.stdout.write(`${JSON.stringify(rows)}\n`);
}

async function parent(): Promise<void> {
  const rows: unknown[] = [];
  for (const framework of ['fastify', 'hono']) {
    const proc = fork(fileURLToPath(import.meta.url), [], {
      execArgv: process.execArgv,
      env: { ...process.env, KEYSET_HOOKS_FRAMEWORK: framework },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => proc.once('close', resolve));
    if (code !== 0) throw new Error(`${framework}: exited with ${code}`);
    rows.push(...(JSON.parse(out.trim().split('\n').at(-1)!) as unknown[]));
  }
  console.table(rows);
  save('framework-hooks', { rounds: ROUNDS, batch: BATCH, rows });
}

if (FRAMEWORK !== undefined) await child(FRAMEWORK);
else await parent();
