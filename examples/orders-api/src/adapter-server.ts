/**
 * `ADAPTER` → the server builder: each one mounts the same app (`src/app`) and only
 * translates, so every adapter answers alike.
 * @module
 */
import type { Server } from 'node:http';
import type { OrdersApp } from './app/create-app.ts';
import type { AdapterName } from './config.ts';
import { createExpressServer } from './server-express.ts';
import { createFastifyServer } from './server-fastify.ts';
import { createFetchServer } from './server-fetch.ts';
import { createHonoServer, type ServerOptions } from './server-hono.ts';

const SERVERS: Readonly<Record<AdapterName, (app: OrdersApp, options: ServerOptions) => Server | Promise<Server>>> = Object.freeze({
  hono: createHonoServer,
  express: createExpressServer,
  fastify: createFastifyServer,
  fetch: createFetchServer,
});

/**
 * A Node HTTP server (not yet listening) serving `app` through `adapter`.
 *
 * @example
 * ```ts
 * const server = await createAdapterServer('fastify', app, { logger });
 * server.listen(3000);
 * ```
 */
export async function createAdapterServer(adapter: AdapterName, app: OrdersApp, options: ServerOptions): Promise<Server> {
  return SERVERS[adapter](app, options);
}
