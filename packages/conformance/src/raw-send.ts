/**
 * Ways to send a request exactly as written: over a socket (any request target, any Host,
 * two header lines of one name, which `fetch()` cannot send), or in process through the
 * app's `request` function. Test support only.
 * @module
 */
import { connect } from 'node:net';
import { inProcess } from './world.ts';
import type { ConformanceFixture } from './fixture.ts';
import type { RunningApp, SendRequest } from './world.ts';

/** A response read off the wire (or from a `Response`): status, lower-cased headers, body text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends one request with exactly these header lines (in order, names repeated as given). */
export type RawSend = (method: string, target: string, headers: readonly (readonly [string, string])[], body?: string) => Promise<RawResponse>;

/** Over a socket to `origin`: the request line and header lines as written (a `Host` line only if given). */
export function rawOverSocket(origin: string): RawSend & { origin: string } {
  const { hostname, port } = new URL(origin);
  const send: RawSend = (method, target, headers, body = '') =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        const lines = [`${method} ${target} HTTP/1.1`, ...headers.map(([k, v]) => `${k}: ${v}`), `content-length: ${Buffer.byteLength(body)}`, 'connection: close', '', body];
        socket.end(lines.join('\r\n'));
      });
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (data += chunk));
      socket.on('error', reject);
      socket.on('end', () => {
        const [head = '', ...rest] = data.split('\r\n\r\n');
        const [statusLine = '', ...headerLines] = head.split('\r\n');
        const parsed: Record<string, string> = {};
        for (const line of headerLines) parsed[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
        resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, body: rest.join('\r\n\r\n') });
      });
    });
  return Object.assign(send, { origin });
}

/** In process, through the app's `request` function: a `Request` per call (`Headers` joins repeated names with `, `). */
export function rawInProcess(request: SendRequest): RawSend {
  return async (method, target, headers, body) => {
    const res = await request(target, { method, headers: headers.map(([k, v]) => [k, v] as [string, string]), ...(body === undefined ? {} : { body }) });
    return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  };
}

/** Like `inProcess()`, for a `serve` that also answers how to send raw requests. */
export function inProcessWithRaw(
  serve: (fixture: ConformanceFixture) => Promise<{ request: SendRequest; raw: RawSend; close(): Promise<void> }>,
): () => Promise<RunningApp & { raw: RawSend }> {
  return async () => {
    let raw: RawSend | undefined;
    const app = await inProcess(async (fixture) => {
      const served = await serve(fixture);
      raw = served.raw;
      return served;
    })();
    return { world: app.world, request: app.request, close: app.close, raw: raw! };
  };
}
