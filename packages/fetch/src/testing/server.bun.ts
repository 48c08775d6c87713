/**
 * Entry bundled and run by `bun`: serves the conformance app with `Bun.serve` on a free
 * port and prints `{"port":…}` on stdout once it listens. Test support only.
 * @module
 */
import { conformanceServer } from './conformance-server.ts';

declare const Bun: {
  serve(options: { port: number; hostname: string; fetch: (request: Request) => Promise<Response> }): { port: number };
};

const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: conformanceServer() });
console.log(JSON.stringify({ port: server.port }));
