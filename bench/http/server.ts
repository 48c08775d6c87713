/**
 * One benchmark server per process: `node <bundle> <stack> <keysFile>`. Writes the API
 * keys the stack accepts to `keysFile` (one a line), then prints `READY <port>`.
 * Every stack serves the same GET /api/orders page (20 items + next cursor, optional
 * `?status=` filter) from the same in-memory data.
 *
 * `GET /__bench/stats` (answered before any framework sees the request, and not counted)
 * returns this process's CPU time and the number of requests served so far, so the
 * runner can report server CPU µs per request.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { KEY_COUNT, plainPage, statusOf } from './orders.ts';
import { keysetExpress, keysetFetch, keysetHono } from './keyset-stacks.ts';
import { expressPeer, honoPeer, peerKeys } from './peer-stacks.ts';
import { fastifyBare, fastifyKeyset, fastifyPeer } from './fastify-stacks.ts';

type Listener = Parameters<typeof createServer>[1];

async function build(stack: string): Promise<{ listener: Listener; keys: string[] }> {
  switch (stack) {
    case 'node':
      return {
        keys: peerKeys(KEY_COUNT).keys,
        listener: (req, res) => {
          const url = new URL(req.url ?? '/', 'http://localhost');
          if (url.pathname !== '/api/orders') {
            res.writeHead(404).end();
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(plainPage(url.searchParams.get('cursor'), statusOf(url.searchParams.get('status')))));
        },
      };
    case 'hono': {
      const app = new Hono();
      app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
      return { keys: peerKeys(KEY_COUNT).keys, listener: honoListener(app) };
    }
    case 'express': {
      const app = express();
      app.get('/api/orders', (req, res) => {
        res.json(plainPage(typeof req.query.cursor === 'string' ? req.query.cursor : null, statusOf(typeof req.query.status === 'string' ? req.query.status : null)));
      });
      return { keys: peerKeys(KEY_COUNT).keys, listener: app as unknown as Listener };
    }
    case 'hono-peer': {
      const { app, keys } = honoPeer();
      return { keys, listener: honoListener(app) };
    }
    case 'express-peer': {
      const { app, keys } = expressPeer();
      return { keys, listener: app as unknown as Listener };
    }
    case 'hono-keyset': {
      const { app, keys } = await keysetHono();
      return { keys, listener: honoListener(app) };
    }
    case 'express-keyset': {
      const { app, keys } = await keysetExpress();
      return { keys, listener: app as unknown as Listener };
    }
    case 'fetch': {
      // A bare Web-standard handler, served like the Fetch adapter's below.
      const handler = (request: Request): Response => {
        const url = new URL(request.url);
        if (url.pathname !== '/api/orders') return new Response(null, { status: 404 });
        return new Response(JSON.stringify(plainPage(url.searchParams.get('cursor'), statusOf(url.searchParams.get('status')))), {
          headers: { 'content-type': 'application/json' },
        });
      };
      return { keys: peerKeys(KEY_COUNT).keys, listener: getRequestListener(handler) as Listener };
    }
    case 'fetch-keyset': {
      const { handler, keys } = await keysetFetch();
      return { keys, listener: getRequestListener(handler) as Listener };
    }
    case 'fastify':
      return fastifyBare();
    case 'fastify-keyset':
      return fastifyKeyset();
    case 'fastify-peer':
      return fastifyPeer();
    default:
      throw new Error(`unknown stack ${stack}`);
  }
}

function honoListener(app: Hono): Listener {
  return getRequestListener(app.fetch) as Listener;
}

const stack = process.argv[2] ?? 'node';
const keysFile = process.argv[3];
const { listener, keys } = await build(stack);
if (keysFile) writeFileSync(keysFile, keys.join('\n'));
let served = 0;
const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  if (req.url === '/__bench/stats') {
    const { user, system } = process.cpuUsage();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user, system, served }));
    return;
  }
  served++;
  listener!(req, res);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
