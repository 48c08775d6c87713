/**
 * Serves an Express app on a real `node:http` server on an ephemeral port. Test support only.
 * @module
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

/** Listens on 127.0.0.1, port 0; `close()` also drops kept-alive connections. */
export async function listen(app: Express): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer(app);
  // Idle kept-alive connections stay open for the whole test. With Node's default (5 s) the
  // fuzz failed with ECONNRESET on a loaded machine: fast-check's first generation is seconds
  // of synchronous work after the cursors are harvested, so both sockets sat idle ~5 s; the
  // client (same process, same event loop) could not expire them meanwhile, reused one, and
  // the server's idle timer destroyed it under the request. Fastify's default is 72 s.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
