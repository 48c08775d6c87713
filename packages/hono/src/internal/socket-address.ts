/**
 * The socket's peer address when Hono runs on `@hono/node-server`, read the way its
 * `getConnInfo` does (`c.env.incoming.socket`, or `c.env.server.incoming` behind a
 * wrapper) but structurally, so the adapter imports nothing runtime-specific. Elsewhere
 * (Bun, Deno, Workers) `apiKey({ clientAddress })` supplies it.
 * @module
 */
import type { Context } from 'hono';

interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: unknown } };
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
