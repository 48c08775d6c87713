/**
 * One benchmark server per process: `node <bundle> <stack> <keysFile>`. Writes the API
 * keys the stack accepts to `keysFile` (one a line), then prints `READY <port>`.
 * Every stack serves the same GET /api/orders page (20 items + next cursor, optional
 * `?status=` filter) from the same in-memory data.
 *
 * `GET /__bench/stats` (answered before any framework sees the request, and not counted)
 * returns this process's CPU time and the number of requests served so far, so the
 * runner can report server CPU µs per request.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from './stacks.ts';

const stack = process.argv[2] ?? 'node';
const keysFile = process.argv[3];
const { listener, keys } = await build(stack);
if (keysFile) writeFileSync(keysFile, keys.join('\n'));
let served = 0;
const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  if (req.url === '/__bench/stats') {
    const { user, system } = process.cpuUsage();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user, system, served }));
    return;
  }
  served++;
  listener!(req, res);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
