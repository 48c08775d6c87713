/**
 * Every stack the benchmarks serve, by name, as a `node:http` request listener and the
 * API keys it accepts: the HTTP benchmark (`server.ts`) serves one per process, the
 * in-process adapter benchmark injects requests into several side by side.
 * Every stack serves the same GET /api/orders page (20 items + next cursor, optional
 * `?status=` filter) from the same in-memory data.
 */
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { KEY_COUNT, plainPage, statusOf } from './orders.ts';
import { keysetExpress, keysetFetch, keysetHono } from './keyset-stacks.ts';
import { expressPeer, honoPeer, peerKeys } from './peer-stacks.ts';
import { fastifyBare, fastifyKeyset, fastifyPeer } from './fastify-stacks.ts';
import { handRolledHono } from './handrolled-stack.ts';

export type Listener = Parameters<typeof createServer>[1];

export async function build(stack: string): Promise<{ listener: Listener; keys: string[] }> {
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
    case 'hono-handrolled': {
      // The full stack's unavoidable work written plainly, none of keyset's checks: a floor, not a product.
      const { app, keys } = handRolledHono();
      return { keys, listener: honoListener(app as unknown as Hono) };
    }
    case 'hono-keyset': {
      const { app, keys } = await keysetHono();
      return { keys, listener: honoListener(app) };
    }
    case 'hono-keyset-no-budget': {
      // The memory benchmark's flood: every unknown key reaches the caches.
      const { app, keys } = await keysetHono(undefined, undefined, { refusedCredentials: false });
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

