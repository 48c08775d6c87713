/**
 * The in-process benchmarks' fake `IncomingMessage` and `ServerResponse`: the parts
 * `@hono/node-server`'s listener uses, the head serialised as Node does, no socket.
 */
import { getRequestListener } from '@hono/node-server';

export type Listener = (incoming: unknown, outgoing: unknown) => Promise<unknown> | unknown;

/** The parts of ServerResponse `@hono/node-server` uses; `writeHead` builds the head text as Node does. */
export class FakeResponse {
  statusCode = 200;
  headersSent = false;
  writable = true;
  writableFinished = false;
  _contentLength = undefined;
  head = '';
  body = '';
  writeHead(status: number, headers?: Record<string, string | number | string[]>): this {
    this.statusCode = status;
    let head = `HTTP/1.1 ${status} OK\r\n`;
    if (headers) for (const name in headers) head += `${name}: ${String(headers[name])}\r\n`;
    this.head = head;
    this.headersSent = true;
    return this;
  }
  end(body?: string | Uint8Array): this {
    this.body = body === undefined ? '' : typeof body === 'string' ? body : Buffer.from(body).toString();
    this.writableFinished = true;
    return this;
  }
  // A response written chunk by chunk means its body became a stream somewhere (reading a
  // `Response`'s `body` on @hono/node-server does that): tens of µs a request, so it fails
  // the benchmark, and its smoke run in the suite, instead of being timed.
  write(): boolean {
    throw new Error('a streamed response: this benchmark expects one head + body');
  }
  hasHeader(): boolean {
    return false;
  }
  on(): this {
    return this;
  }
  once(): this {
    return this;
  }
}

/** A GET of `path` with `Authorization: ApiKey <key>`, as `@hono/node-server` reads it. */
export function incoming(path: string, key: string) {
  const authorization = `ApiKey ${key}`;
  return {
    method: 'GET',
    url: path,
    headers: { host: 'localhost', authorization },
    rawHeaders: ['Host', 'localhost', 'Authorization', authorization],
    socket: { encrypted: false },
    readableEnded: true,
  };
}

/** A stack under measurement: its listener, its keys and the page paths it walked. */
export interface Stack {
  name: string;
  listener: Listener;
  keys: string[];
  paths: string[];
}

/** One request through `listener`, answered into a fresh fake response. */
export async function sendFake(listener: Listener, path: string, key: string): Promise<FakeResponse> {
  const res = new FakeResponse();
  await listener(incoming(path, key), res);
  return res;
}

const FILTERS = ['', 'status=paid&', 'status=refunded&'];

/**
 * Walks `app`'s `GET /api/orders` with each filter for up to `pages` pages (the paths a
 * production client sends, cursors included), then sends one request per key to warm
 * every key (verification cache, GCRA entries) and the JIT.
 */
export async function warmStack(name: string, app: { fetch: (request: Request) => Response | Promise<Response> }, keys: string[], pages: number): Promise<Stack> {
  const listener = getRequestListener(app.fetch) as unknown as Listener;
  const paths: string[] = [];
  for (const filter of FILTERS) {
    let path = `/api/orders?${filter}limit=20`;
    for (let page = 0; page < pages; page++) {
      paths.push(path);
      const sent = await sendFake(listener, path, keys[0]!);
      if (sent.statusCode !== 200) throw new Error(`${name} ${path} → ${sent.statusCode} ${sent.body}`);
      const next = (JSON.parse(sent.body) as { nextCursor: string | null }).nextCursor;
      if (next === null) break;
      path = `/api/orders?${filter}limit=20&cursor=${encodeURIComponent(next)}`;
    }
  }
  for (let i = 0; i < keys.length; i++) await sendFake(listener, paths[i % paths.length]!, keys[i]!);
  return { name, listener, keys, paths };
}

/** CPU time (user + system) of this process in µs: unlike wall time, it does not grow while other processes hold the CPU. */
export function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * Times `batch` requests through a stack, in CPU µs per request. Requests go through the
 * stack's page paths in turn and its keys with a prime stride (production-like: many keys,
 * many cursors), each call going on where the last stopped.
 */
export function stackTimer(batch: number): (s: Stack) => Promise<number> {
  let counter = 0;
  return async (s) => {
    const start = cpuNow();
    for (let n = 0; n < batch; n++) {
      const i = counter++;
      const res = new FakeResponse();
      await s.listener(incoming(s.paths[i % s.paths.length]!, s.keys[(i * 7919) % s.keys.length]!), res);
      if (res.statusCode !== 200) throw new Error(`${s.name}: ${res.statusCode} ${res.body}`);
    }
    return (cpuNow() - start) / batch;
  };
}
