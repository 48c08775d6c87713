/**
 * A TCP proxy a test controls, in front of a real shared server (PostgreSQL, Redis), so
 * a test can make that server slow or frozen for its own connections only, never for the
 * other people using the server:
 * - `latencyMs`: every chunk from the server reaches the client that much later (a loaded
 *   server that still answers);
 * - `freeze()`: nothing is forwarded either way, connections stay open (a server stopped
 *   with SIGSTOP, or a network partition); `thaw()` forwards what was held back;
 * - `cut()`: every open connection is dropped (what the server already received, it runs).
 */
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  /** Port on 127.0.0.1 to connect to instead of the server's. */
  readonly port: number;
  /** Delay added to every chunk from the server to the client. */
  latencyMs: number;
  /** Stops forwarding in both directions; data is held, connections stay open. */
  freeze(): void;
  /** Forwards what was held and resumes. */
  thaw(): void;
  /** Drops every open connection (both sides see it closed), and keeps accepting new ones: a cut. */
  cut(): void;
  /** Connections currently open through the proxy. */
  readonly connections: number;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
}

/** Starts a proxy to `target` (a `host:port`, or a URL such as `postgres://…`/`redis://…`). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const url = new URL(target.includes('://') ? target : `tcp://${target}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const targetPort = Number(url.port || (url.protocol.startsWith('redis') ? 6379 : 5432));
  const sockets = new Set<Socket>();
  const held: (() => void)[] = [];
  let frozen = false;

  const proxy = {
    port: 0,
    latencyMs: 0,
    freeze(): void {
      frozen = true;
    },
    thaw(): void {
      frozen = false;
      for (const send of held.splice(0)) send();
    },
    cut(): void {
      held.length = 0;
      for (const socket of sockets) socket.destroy();
    },
    get connections(): number {
      return sockets.size / 2;
    },
    close(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const pipe = (from: Socket, to: Socket, delayed: boolean): void => {
    from.on('data', (chunk: Buffer) => {
      const send = (): void => {
        if (!to.destroyed) to.write(chunk);
      };
      // Chunks keep their order: a held or delayed chunk is queued behind earlier ones.
      const forward = (): void => {
        if (frozen) held.push(send);
        else send();
      };
      if (delayed && proxy.latencyMs > 0) setTimeout(forward, proxy.latencyMs);
      else forward();
    });
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };

  const server = createServer((client) => {
    const upstream = connect({ host, port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    pipe(client, upstream, false);
    pipe(upstream, client, true);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  proxy.port = (server.address() as { port: number }).port;
  return proxy;
}
