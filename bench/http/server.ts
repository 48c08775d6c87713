/**
 * One benchmark server per process: `node --import tsx bench/http/server.ts <stack>`.
 * Prints `READY <port> <apiKey>` once listening. Every stack serves the same
 * GET /api/orders page (20 items + next cursor) from the same in-memory data.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { BENCH_KEY, plainPage } from './orders.ts';
import { keysetExpress, keysetHono } from './keyset-stacks.ts';
import { expressPeer, honoPeer } from './peer-stacks.ts';

type Listener = Parameters<typeof createServer>[1];

async function build(stack: string): Promise<{ listener: Listener; key: string }> {
  switch (stack) {
    case 'node':
      return {
        key: BENCH_KEY,
        listener: (req, res) => {
          const url = new URL(req.url ?? '/', 'http://localhost');
          if (url.pathname !== '/api/orders') {
            res.writeHead(404).end();
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(plainPage(url.searchParams.get('cursor'))));
        },
      };
    case 'hono': {
      const app = new Hono();
      app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'))));
      return { key: BENCH_KEY, listener: honoListener(app) };
    }
    case 'express': {
      const app = express();
      app.get('/api/orders', (req, res) => {
        res.json(plainPage(typeof req.query.cursor === 'string' ? req.query.cursor : null));
      });
      return { key: BENCH_KEY, listener: app as unknown as Listener };
    }
    case 'hono-peer':
      return { key: BENCH_KEY, listener: honoListener(honoPeer()) };
    case 'express-peer':
      return { key: BENCH_KEY, listener: expressPeer() as unknown as Listener };
    case 'hono-keyset': {
      const { app, key } = await keysetHono();
      return { key, listener: honoListener(app) };
    }
    case 'express-keyset': {
      const { app, key } = await keysetExpress();
      return { key, listener: app as unknown as Listener };
    }
    default:
      throw new Error(`unknown stack ${stack}`);
  }
}

function honoListener(app: Hono): Listener {
  return getRequestListener(app.fetch) as Listener;
}

const stack = process.argv[2] ?? 'node';
const { listener, key } = await build(stack);
const server = createServer({ keepAliveTimeout: 60_000 }, listener);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port} ${key}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
