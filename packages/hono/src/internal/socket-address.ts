/**
 * The socket's peer address when Hono runs on `@hono/node-server`, read the way its
 * `getConnInfo` does (`c.env.incoming.socket`, or `c.env.server.incoming` behind a
 * wrapper) but structurally, so the adapter imports nothing runtime-specific. Elsewhere
 * (Bun, Deno, Workers) `apiKey({ clientAddress })` supplies it.
 * @module
 */
import type { Context } from 'hono';

interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: unknown }; url?: unknown };
  server?: NodeBindings;
}

/** `c.env.incoming.socket.remoteAddress`, or `undefined` when not on Node's HTTP server. */
export function nodeSocketAddress(c: Context): string | undefined {
  const env = c.env as NodeBindings | undefined;
  if (typeof env !== 'object' || env === null) return undefined;
  const bindings = env.server ?? env;
  const address = bindings.incoming?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
}

/**
 * The request target as sent (`c.env.incoming.url`), or `undefined` when not on Node's HTTP
 * server: `c.req.url` has its dot segments resolved already.
 */
export function nodeRequestTarget(c: Context): string | undefined {
  const env = c.env as NodeBindings | undefined;
  if (typeof env !== 'object' || env === null) return undefined;
  const url = (env.server ?? env).incoming?.url;
  return typeof url === 'string' ? url : undefined;
}
