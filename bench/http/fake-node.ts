/**
 * The in-process benchmarks' fake `IncomingMessage` and `ServerResponse`: the parts
 * `@hono/node-server`'s listener uses, the head serialised as Node does, no socket.
 */
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
