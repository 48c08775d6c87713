/**
 * Injects a request into a `node:http` request listener without a socket: node:http's own
 * `IncomingMessage` and `ServerResponse` over a stub socket that swallows writes. Every
 * framework (Express, Fastify, Hono and the Fetch adapter through `@hono/node-server`)
 * then reads headers, sets headers and serialises the head exactly as it does when served,
 * and the stub is the same for every stack, so differences between stacks are fair.
 * What the kernel and the HTTP parser cost is left out (the same for every stack).
 */
import { EventEmitter } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type Listener = (req: IncomingMessage, res: ServerResponse) => unknown;

/** What a response looked like on the (stub) wire. */
export interface Sent {
  status: number;
  head: string;
  body: string;
}

/**
 * The parts of `net.Socket` that node:http's server-side messages touch. Writes complete
 * on the next tick, as a real socket's do, so `finish` comes after the handler returns.
 */
class StubSocket extends EventEmitter {
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 40000;
  readonly encrypted = undefined;
  writable = true;
  destroyed = false;
  _httpMessage: unknown = null;
  readonly _writableState = { corked: 0 };
  /** Written chunks of the current response, when capturing. */
  chunks: (string | Uint8Array)[] | undefined;
  write(data: string | Uint8Array, encoding?: unknown, callback?: (() => void) | null): boolean {
    if (typeof encoding === 'function') callback = encoding as () => void;
    if (this.chunks !== undefined && data.length > 0) this.chunks.push(data);
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }
  cork(): void {}
  uncork(): void {}
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  destroy(): this {
    return this;
  }
}

const socket = new StubSocket();

/**
 * Sends `GET path` with `Authorization: ApiKey <key>` to `listener`; resolves when the
 * response has finished. `capture` keeps the bytes written (the head and body) to return.
 */
export function inject(listener: Listener, path: string, key: string, capture = false): Promise<Sent> {
  const req = new IncomingMessage(socket as unknown as Socket);
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.method = 'GET';
  req.url = path;
  // As node:http's parser hands them over: `req.headers` is built from them lazily.
  const raw = ['Host', 'localhost', 'Authorization', `ApiKey ${key}`, 'Accept', '*/*'];
  (req as unknown as { _addHeaderLines(headers: string[], n: number): void })._addHeaderLines(raw, raw.length);
  req.complete = true;
  req.push(null);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = true;
  res.assignSocket(socket as unknown as Socket);
  socket.chunks = capture ? [] : undefined;
  return new Promise((resolve, reject) => {
    res.once('finish', () => {
      res.detachSocket(socket as unknown as Socket);
      if (!capture) {
        resolve({ status: res.statusCode, head: '', body: '' });
        return;
      }
      const text = (socket.chunks ?? []).map((c) => (typeof c === 'string' ? c : Buffer.from(c).toString('latin1'))).join('');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: res.statusCode, head: text.slice(0, split + 2), body: Buffer.from(text.slice(split + 4), 'latin1').toString('utf8') });
    });
    try {
      const returned = listener(req, res);
      if (returned instanceof Promise) returned.catch(reject);
    } catch (error) {
      reject(error);
    }
  });
}
