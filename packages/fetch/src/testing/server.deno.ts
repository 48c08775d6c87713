/**
 * Entry bundled and run by `deno`: serves the conformance app with `Deno.serve` on a free
 * port and prints `{"port":…}` on stdout once it listens. Test support only.
 * @module
 */
import { conformanceServer } from './conformance-server.ts';

interface ServeHandlerInfo {
  remoteAddr: { hostname: string };
}
declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number }): void },
    handler: (request: Request, info: ServeHandlerInfo) => Promise<Response>,
  ): unknown;
};

// The socket peer, as a Deno user passes it: `info.remoteAddr.hostname`.
const handler = conformanceServer((_request, info) => (info as ServeHandlerInfo).remoteAddr.hostname);
Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(JSON.stringify({ port })) }, handler);
