/**
 * The node:http server every benchmark server process runs its stack behind: it answers
 * `GET /__bench/stats` itself (before any framework sees it, and not counted) with this
 * process's CPU time and the requests served so far, so that the runner can report server
 * CPU µs per request; prints `READY <port>` once listening, and closes on SIGTERM.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export function serveWithStats(listener: (req: IncomingMessage, res: ServerResponse) => unknown, onTerm: () => void = () => {}): void {
  let served = 0;
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    if (req.url === '/__bench/stats') {
      const { user, system } = process.cpuUsage();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user, system, served }));
      return;
    }
    served++;
    void listener(req, res);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`));
  process.on('SIGTERM', () => {
    onTerm();
    server.close(() => process.exit(0));
  });
}
