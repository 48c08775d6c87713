/**
 * Fastify stacks for the HTTP benchmark, under the same rules as the others (the same
 * orders, key count, cursor walk and limits high enough that nothing is refused):
 * - `fastify`: bare Fastify, no auth, an unsigned base64 JSON cursor (like `hono`/`express`);
 * - `fastify-keyset`: `@keyset/fastify` (apiKey in onRequest, paginate, sendPage);
 * - `fastify-peer`: what a Fastify user picks instead, `@fastify/bearer-auth` with the
 *   `ApiKey` keyword over a `Map` of plaintext keys + `@fastify/rate-limit` per key.
 * Each export resolves a `node:http` request listener (through Fastify's `serverFactory`)
 * and the keys to send, the shape `server.ts`'s `build()` returns.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import bearerAuth from '@fastify/bearer-auth';
import rateLimit from '@fastify/rate-limit';
import { apiKey, keyset, paginate, sendPage } from '@keyset/fastify';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { keysetCore } from './keyset-stacks.ts';
import { KEY_COUNT, pageAfter, plainPage, statusOf } from './orders.ts';
import type { Order } from './orders.ts';
import { peerKeys } from './peer-stacks.ts';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A Fastify app whose routes `setup` adds, as a request listener (the app is ready). */
async function listenerOf(setup: (app: FastifyInstance) => Promise<void> | void): Promise<Listener> {
  let listener: Listener | undefined;
  const app = Fastify({
    serverFactory: (handler) => {
      listener = handler as Listener;
      return createServer(handler);
    },
  });
  await setup(app);
  await app.ready();
  if (listener === undefined) throw new Error('Fastify did not hand over its request handler');
  return listener;
}

const queryString = (raw: string | undefined): URLSearchParams => new URL(raw ?? '/', 'http://localhost').searchParams;

/** Bare Fastify: the orders page with no auth and no keyset. */
export async function fastifyBare(): Promise<{ listener: Listener; keys: string[] }> {
  const listener = await listenerOf((app) => {
    app.get('/api/orders', async (request) => {
      const query = queryString(request.raw.url);
      return plainPage(query.get('cursor'), statusOf(query.get('status')));
    });
  });
  return { listener, keys: peerKeys(KEY_COUNT).keys };
}

/** keyset on Fastify: the plugin, apiKey() in onRequest, paginate() in preHandler. */
export async function fastifyKeyset(keyCount?: number): Promise<{ listener: Listener; keys: string[] }> {
  const { keys, guard, paginator } = await keysetCore(keyCount);
  const listener = await listenerOf(async (app) => {
    await app.register(keyset);
    app.get(
      '/api/orders',
      {
        onRequest: apiKey({ guard, scopes: ['orders:read'] }),
        preHandler: paginate(paginator, {
          filters: (query) => {
            const status = statusOf(query.get('status'));
            return status === undefined ? {} : { status };
          },
        }),
      },
      async (request, reply) => {
        const plan = request.page;
        if (plan.mode !== 'cursor') throw new Error('the benchmark walks in cursor mode');
        const after = plan.after === null ? null : { createdAt: plan.after[0] as string, id: plan.after[1] as number };
        const rows: Order[] = pageAfter(after, plan.take, statusOf(queryString(request.raw.url).get('status')));
        return sendPage(reply, rows);
      },
    );
  });
  return { listener, keys };
}

/** The Fastify peer stack: @fastify/bearer-auth (keyword ApiKey) + @fastify/rate-limit per key. */
export async function fastifyPeer(count?: number): Promise<{ listener: Listener; keys: string[] }> {
  const { keys, byKey } = peerKeys(count);
  const listener = await listenerOf(async (app) => {
    // `auth` looks the key up in the Map: `keys` alone compares against every key in turn.
    await app.register(bearerAuth, { keys: new Set<string>(), bearerType: 'ApiKey', auth: (key) => byKey.has(key) });
    await app.register(rateLimit, {
      max: 1_000_000_000,
      timeWindow: 60_000,
      keyGenerator: (request) => byKey.get((request.headers.authorization ?? '').slice(7))?.id ?? request.ip,
    });
    app.get('/api/orders', async (request) => {
      const query = queryString(request.raw.url);
      return plainPage(query.get('cursor'), statusOf(query.get('status')));
    });
  });
  return { listener, keys };
}
