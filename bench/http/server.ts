/**
 * One benchmark server per process: `node <bundle> <stack> <keysFile>`. Writes the API
 * keys the stack accepts to `keysFile` (one a line), then prints `READY <port>`.
 * Every stack serves the same GET /api/orders page (20 items + next cursor, optional
 * `?status=` filter) from the same in-memory data.
 *
 * `GET /__bench/stats` returns this process's CPU time and the requests served so far
 * (stats-server.ts).
 */
import { writeFileSync } from 'node:fs';
import { serveWithStats } from './stats-server.ts';
import { build } from './stacks.ts';

const stack = process.argv[2] ?? 'node';
const keysFile = process.argv[3];
const { listener, keys } = await build(stack);
if (keysFile) writeFileSync(keysFile, keys.join('\n'));
serveWithStats(listener!);
