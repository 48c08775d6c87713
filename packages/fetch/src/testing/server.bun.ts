/**
 * Entry bundled and run by `bun`: serves the conformance app with `Bun.serve` on a free
 * port and prints `{"port":…}` on stdout once it listens. Test support only.
 * @module
 */
import { conformanceServer } from './conformance-server.ts';

interface BunServer {
  port: number;
  requestIP(request: Request): { address: string } | null;
}
declare const Bun: {
  serve(options: { port: number; hostname: string; fetch: (request: Request, server: BunServer) => Promise<Response> }): BunServer;
};

// The socket peer, as a Bun user passes it: `server.requestIP(request)`.
const handler = conformanceServer((request, server) => (server as BunServer).requestIP(request)?.address);
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handler });
console.log(JSON.stringify({ port: server.port }));
